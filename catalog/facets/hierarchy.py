"""``hierarchy`` (dataset): where the dataset sits in its system (DATABASE → SCHEMA →
TABLE, highest level first), shown as the dataset's browse path."""

from typing import Any

from catalog.facets.base import DATASET, Facet, opened

NAME = "hierarchy"
LIMIT = 32  # levels shown (a path deeper than this is cut)
KEY_LIMIT = 1000  # characters of the browse key stored (a btree entry holds ~2700 bytes)
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("HierarchyDatasetFacet",),
    extracts="merged into the dataset's facets by version",
    projects="Dataset.browse_path (the level names joined by /, redacted, ADR 0093; rows "
    "derived before it are filled by migration 0032 / `manage.py fill_browse_paths`)",
    native="dataset detail `hierarchy` (its levels, highest first), list filter `path`, "
    "and in `facets`",
    marquez="in the dataset's `facets`",
)


def levels(facets: Any) -> list[dict[str, str]]:
    """The levels (type, name) in the order sent, which the spec says is highest first; a
    level without a string name and type is skipped. Producer text: the reader redacts."""
    items = opened(facets, NAME).get("hierarchy")
    return [
        {"type": item["type"], "name": item["name"]}
        for item in (items[:LIMIT] if isinstance(items, list) else [])
        if isinstance(item, dict)
        and isinstance(item.get("type"), str)
        and isinstance(item.get("name"), str)
    ]


def path(facets: Any) -> str:
    """The browse path as one text (``my_db / my_schema / my_table``), or ""."""
    return " / ".join(level["name"] for level in levels(facets))


def browse_key(facets: Any) -> str:
    """The level names joined by ``/`` (``my_db/my_schema/my_table``), what the browse
    filter matches a prefix of; "" without levels. A ``/`` inside a name reads as a level
    boundary there. Producer text: the deriver redacts it."""
    return "/".join(level["name"].strip("/") for level in levels(facets))

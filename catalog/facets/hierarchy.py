"""``hierarchy`` (dataset): where the dataset sits in its system (DATABASE → SCHEMA →
TABLE, highest level first), shown as the dataset's browse path."""

from typing import Any

from catalog.facets.base import DATASET, Facet, opened

NAME = "hierarchy"
LIMIT = 32  # levels shown (a path deeper than this is cut)
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("HierarchyDatasetFacet",),
    extracts="merged into the dataset's facets by version",
    projects="read from the dataset's facets when shown (no rows of its own)",
    native="dataset detail `hierarchy` (its levels, highest first), and in `facets`",
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

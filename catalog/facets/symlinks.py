"""``symlinks`` (dataset): other names of the same dataset."""

from collections.abc import Iterator
from typing import Any

from catalog.facets.base import DATASET, Facet, opened

NAME = "symlinks"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("SymlinksDatasetFacet",),
    extracts="each identifier with a string namespace and a non-blank name becomes an alias "
    "linked to the dataset's (reason symlink); also merged into the dataset's facets",
    projects="DatasetAlias + AliasLink (one dataset); a TABLE identifier is preferred as "
    "the display name (DatasetAlias.is_table_name)",
    native="dataset `aliases`, and in `facets`",
    marquez="in the dataset's `facets`",
)


def identifiers(facets: Any) -> Iterator[tuple[str, str, str]]:
    """(namespace, name, type) of every usable identifier, type as sent ("" if none)."""
    listed = opened(facets, NAME).get("identifiers")
    for identifier in listed if isinstance(listed, list) else []:
        if not isinstance(identifier, dict):
            continue
        namespace, name = identifier.get("namespace"), identifier.get("name")
        if not isinstance(namespace, str) or not isinstance(name, str) or not name.strip():
            continue
        yield namespace, name, str(identifier.get("type") or "")


def is_table(kind: str) -> bool:
    return kind.upper() == "TABLE"

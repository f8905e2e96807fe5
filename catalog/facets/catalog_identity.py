"""``catalog`` (dataset): the metastore catalog a table belongs to, read as an identity
hint (ADR 0093): two engines' names of one table in one catalog become aliases of one
dataset, without a steward's rule."""

from collections.abc import Iterable
from typing import Any

from catalog.facets.base import DATASET, Facet, opened
from catalog.names import naming

NAME = "catalog"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("CatalogDatasetFacet",),
    extracts="framework, type and metadataUri (else warehouseUri), with the table's name "
    "inside the catalog, become one alias linked to the dataset's (reason catalog); no "
    "alias when the facet lacks any of them; also merged into the dataset's facets",
    projects="DatasetAlias + AliasLink (one dataset), like a symlink",
    native="dataset `aliases` (namespace `catalog:<framework>/<type>`), and in `facets`",
    marquez="in the dataset's `facets`",
)
PREFIX = "catalog:"
# An Iceberg JDBC catalog keeps several catalogs in one database, told apart by name: there
# the name is part of the identity. Elsewhere the name is the engine's own label for the
# catalog (Spark's ``spark_catalog``, Trino's ``lakehouse`` for one Hive metastore).
NAMED_TYPES = frozenset({"jdbc"})


def _word(facet: dict[str, Any], field: str) -> str:
    value = facet.get(field)
    return value.strip() if isinstance(value, str) else ""


def identity(facets: Any, name: str = "", table_names: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The (namespace, name) aliases the facet gives a dataset called ``name`` whose TABLE
    symlinks are ``table_names``; [] when the facet is silent or lacks a part.

    The table's name inside the catalog is each TABLE symlink's name (Spark names the
    metastore table so), else the dataset's own name without the catalog's ``name.``
    prefix (Trino's ``lakehouse.db.t`` is ``db.t`` in catalog ``lakehouse``)."""
    facet = opened(facets, NAME)
    framework, kind, label = (_word(facet, f) for f in ("framework", "type", "name"))
    uri = _word(facet, "metadataUri") or _word(facet, "warehouseUri")
    if not framework or not kind or not label or not uri:
        return []
    kind = kind.lower()
    namespace = f"{PREFIX}{framework.lower()}/{kind}"
    if kind in NAMED_TYPES:
        namespace += f"/{label}"
    # One spelling of the catalog's address (scheme and host case, s3a, credentials).
    where = naming.normalise_namespace(uri)
    tables = sorted({table.strip() for table in table_names if table.strip()})
    if not tables and name.strip():
        tables = [name.strip()]
    return [(namespace, f"{where}#{_without(table, label)}") for table in tables]


def _without(table: str, label: str) -> str:
    """A symlink may name the table with the catalog in front, as Trino does."""
    return table.removeprefix(f"{label}.") or table

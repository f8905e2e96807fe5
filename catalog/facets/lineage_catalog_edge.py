"""``lineageCatalog_edge`` (run): the catalog's own run facet, written for an edge API
event (``{"source_table", "target_table", "lineage_type", "pipeline"}``, ADR 0022)."""

from typing import Any

from catalog.facets.base import RUN, Facet

NAME = "lineageCatalog_edge"
FACET = Facet(
    NAME,
    appears=(RUN,),
    extracts="made by derivation from an edge event's lineage_type (≤100 chars) and "
    "pipeline; merged into the run's facets by version",
    projects="LineageEdge.lineage_type, LineageEdge.pipeline (from the edge's last run)",
    native="lineage edge `lineage_type`, `pipeline`; in the run's `facets`",
    marquez="in the run's `facets`",
)


def facet(lineage_type: str, pipeline: str) -> dict[str, Any]:
    """The run facets an edge event contributes."""
    return {NAME: {"lineage_type": lineage_type, "pipeline": pipeline}}


def sql_value(key: str, run: str = "r") -> str:
    """SQL reading one of the facet's keys from ``catalog_run`` aliased ``run``."""
    assert key in ("lineage_type", "pipeline")
    return f"COALESCE({run}.facets->'{NAME}'->>'{key}', '')"

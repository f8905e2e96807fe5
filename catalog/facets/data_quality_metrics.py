"""``dataQualityMetrics`` (input dataset): rows, bytes, files and per-column metrics."""

from typing import Any

from catalog.facets._numbers import statistics
from catalog.facets.base import DATASET, INPUT, OUTPUT, Facet, RunFactShape

NAME = "dataQualityMetrics"


def shape(value: dict[str, Any]) -> dict[str, Any]:
    columns = value.get("columnMetrics")
    return {
        **statistics({**value, "size": value.get("bytes")}),
        "column_metrics": columns if isinstance(columns, dict) else {},
    }


FACET = Facet(
    NAME,
    appears=(INPUT, OUTPUT, DATASET),
    schemas=("DataQualityMetricsDatasetFacet", "DataQualityMetricsInputDatasetFacet"),
    extracts="from an input's inputFacets (or an input's or output's dataset facets), "
    "per (run, alias, direction) by version; also merged into the dataset's facets when "
    "sent as a dataset facet",
    projects="RunDatasetFacet",
    native="run detail `dataset_facts[].quality_metrics`, dataset detail `run_facts`",
    marquez="run `inputDatasetVersions[].facets`",
    run_fact=RunFactShape("quality_metrics", shape),
)

"""``dataQualityAssertions`` (input dataset): each assertion, its column and success, and
(facet 1-1-0) its test's name, severity, expected and actual values."""

from typing import Any

from catalog.facets._numbers import text
from catalog.facets.base import DATASET, INPUT, OUTPUT, Facet, RunFactShape

NAME = "dataQualityAssertions"
LIMIT = 200  # assertions shown per entry (every list bounded)


def shape(value: dict[str, Any]) -> list[dict[str, Any]]:
    items = value.get("assertions")
    if not isinstance(items, list):
        return []
    return [
        {
            "assertion": str(item.get("assertion") or ""),
            "success": item.get("success") if isinstance(item.get("success"), bool) else None,
            "column": item.get("column") if isinstance(item.get("column"), str) else None,
            # 1-1-0: absent (None) from a 1-0-0 producer.
            "name": text(item.get("name")),
            "severity": text(item.get("severity")),
            "expected": text(item.get("expected")),
            "actual": text(item.get("actual")),
        }
        for item in items[:LIMIT]
        if isinstance(item, dict)
    ]


FACET = Facet(
    NAME,
    appears=(INPUT, OUTPUT, DATASET),
    schemas=("DataQualityAssertionsDatasetFacet",),
    extracts="from an input's inputFacets (or an input's or output's dataset facets), "
    "per (run, alias, direction) by version; also merged into the dataset's facets when "
    "sent as a dataset facet",
    projects="RunDatasetFacet",
    native="run detail `dataset_facts[].assertions` (assertion, success, column; name, "
    "severity, expected, actual from 1-1-0), dataset detail `run_facts`",
    marquez="run `inputDatasetVersions[].facets`",
    run_fact=RunFactShape("assertions", shape),
)

"""``subset`` (input or output dataset): the part of the dataset the run read or wrote
(BaseSubsetDatasetFacet: ``inputCondition`` or ``outputCondition``: partitions,
locations, comparisons, and binary AND/OR of them), shown on the edge's runs."""

from typing import Any

from catalog.facets.base import INPUT, OUTPUT, Facet, RunFactShape

NAME = "subset"
LIMIT = 200  # partitions and locations listed per entry
DEPTH = 16  # conditions nested deeper are kept as sent but not searched for partitions


def shape(value: dict[str, Any]) -> dict[str, Any] | None:
    """The condition as sent, and the partitions and locations it names (however deep in
    its AND/OR, up to ``DEPTH``). None when the facet has no condition object."""
    condition = value.get("inputCondition", value.get("outputCondition"))
    if not isinstance(condition, dict):
        return None
    partitions: list[dict[str, Any]] = []
    locations: list[str] = []
    _collect(condition, partitions, locations, DEPTH)
    return {
        "type": condition.get("type") if isinstance(condition.get("type"), str) else None,
        "partitions": partitions[:LIMIT],
        "locations": locations[:LIMIT],
        "condition": condition,
    }


def _collect(condition: Any, partitions: list[Any], locations: list[str], depth: int) -> None:
    if not isinstance(condition, dict) or depth == 0 or len(partitions) > LIMIT:
        return
    for item in _list(condition.get("partitions")):
        if isinstance(item, dict) and isinstance(item.get("dimensions"), dict):
            identifier = item.get("identifier")
            partitions.append(
                {
                    "identifier": identifier if isinstance(identifier, str) else None,
                    "dimensions": item["dimensions"],
                }
            )
    locations.extend(item for item in _list(condition.get("locations")) if isinstance(item, str))
    if condition.get("type") == "binary":  # compare's left and right are no conditions
        _collect(condition.get("left"), partitions, locations, depth - 1)
        _collect(condition.get("right"), partitions, locations, depth - 1)


def _list(value: Any) -> list[Any]:
    return value[: LIMIT + 1] if isinstance(value, list) else []


FACET = Facet(
    NAME,
    appears=(INPUT, OUTPUT),
    schemas=("BaseSubsetDatasetFacet",),
    extracts="from an input's inputFacets or an output's outputFacets, per (run, alias, "
    "direction) by version",
    projects="RunDatasetFacet",
    native="run detail `dataset_facts[].subset` (type, partitions, locations, the condition "
    "as sent), dataset detail `run_facts[].subset`",
    marquez="run `inputDatasetVersions[].facets` and `outputDatasetVersions[].facets`",
    run_fact=RunFactShape("subset", shape),
)

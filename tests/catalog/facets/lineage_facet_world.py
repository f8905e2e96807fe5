"""The experimental ``lineage`` facet's examples (spec/tests/LineageFacet, copied under
tests/fixtures/openlineage/lineage-facet/) put into whole events, and the reads of what they
became: the graph's dataset edges and column edges through /api/v1 (ADR 0094)."""

import json
from typing import Any

from django.test import Client

from catalog.models import Dataset
from tests.catalog.facets.spec_examples import FIXTURES
from tests.catalog.facets.world import PRODUCER, ok

EXAMPLES = FIXTURES / "lineage-facet"
WAREHOUSE = "postgresql://warehouse:5432"
JOB = ("lineage-facet-test", "enrich_orders")
RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7790"
OTHER_RUN = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7791"
ORDERS, ENRICHED = (WAREHOUSE, "public.orders"), (WAREHOUSE, "public.enriched_orders")
CUSTOMERS, EXTRACTED = (WAREHOUSE, "public.customers"), (WAREHOUSE, "public.extracted_data")
RAW = (WAREHOUSE, "public.raw_orders")  # named by the event, not by the facet


def example(name: str) -> dict[str, Any]:
    """The example's facet object (the value under ``lineage``)."""
    return json.loads((EXAMPLES / f"{name}.json").read_text())["lineage"]


def _io(names: list[tuple[str, str]], facets: dict[str, Any] | None = None) -> list[dict]:
    return [
        {"namespace": ns, "name": name, **({"facets": facets} if facets else {})}
        for ns, name in names
    ]


def run_event(
    job_facet: Any = None,
    inputs: list[tuple[str, str]] = (),  # type: ignore[assignment]
    outputs: list[tuple[str, str]] = (),  # type: ignore[assignment]
    output_facet: Any = None,
    run: str = RUN,
    time: str = "2026-03-01T10:05:00Z",
) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run, "facets": {}},
        "job": {
            "namespace": JOB[0],
            "name": JOB[1],
            "facets": {} if job_facet is None else {"lineage": job_facet},
        },
        "inputs": _io(list(inputs)),
        "outputs": _io(list(outputs), None if output_facet is None else {"lineage": output_facet}),
    }


def job_event(
    job_facet: Any,
    inputs: list[tuple[str, str]],
    outputs: list[tuple[str, str]],
    time: str = "2026-03-01T09:00:00Z",
) -> dict[str, Any]:
    event = run_event(job_facet, inputs, outputs, time=time)
    del event["run"], event["eventType"]
    event["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
    return event


def dataset_id(alias: tuple[str, str]) -> int:
    return Dataset.objects.for_alias(*alias).get().id


def upstream(api: Client, alias: tuple[str, str], lineage: str = "all") -> set[tuple]:
    """The datasets feeding ``alias`` through a job, as ``(name, observed, static)``, and
    the column edges into it as ``(source dataset name, source field, target field)``."""
    target = dataset_id(alias)
    graph = ok(
        api.get(
            f"/api/v1/lineage/graph?node=dataset:{target}&depth=1&direction=upstream"
            f"&columns=true&lineage={lineage}"
        )
    )
    names = {node["id"]: node.get("name") for node in graph["nodes"]}
    into_job = {
        (names[edge["source"]], edge["target"], edge["observed"], edge["static"])
        for edge in graph["edges"]
        if edge["source"].startswith("dataset:")
    }
    writers = {
        edge["source"]
        for edge in graph["edges"]
        if edge["target"] == f"dataset:{target}" and edge["source"].startswith("job:")
    }
    found: set[tuple] = {(n, o, s) for n, job, o, s in into_job if job in writers}
    for edge in graph.get("column_edges", []):
        if edge.get("target") == f"dataset:{target}" or edge.get("target_dataset") == target:
            found.add((names.get(edge.get("source")), edge["source_field"], edge["target_field"]))
    return found

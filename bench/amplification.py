"""Work in proportion to what was sent (issue 38, items 4, 5 and 6).

    .venv/bin/python bench/amplification.py --size 500
    .venv/bin/python bench/amplification.py --size 0 --transformations 110000
    .venv/bin/python bench/amplification.py --size 5000 --declared

Stores one COMPLETE event of a job with ``size`` inputs and ``size`` outputs, derives it as
the worker does, and prints the event's bytes, the seconds derivation took and the rows it
made: dataset → dataset lineage edges (capped by LINEAGE_MAX_RUN_EDGES, the cut counted on
the run) and job ↔ dataset edges (every input and output). With ``--transformations N``
it stores instead one event with N transformations of one field, and times the lineage
graph with columns (max_nodes 2,000, as the API reads it), its column edges' currency and
the JSON the answer would be; with ``--declared``, one JobEvent declaring ``size`` inputs
and outputs, and times the job's graph with the default bounds. The database is made anew.
"""

import argparse
import os
import sys
import time
import uuid

import orjson

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_amplification"


def event(size: int) -> dict:
    def datasets(prefix: str) -> list[dict]:
        return [{"namespace": "bench", "name": f"{prefix}{index}"} for index in range(size)]

    return {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-01T00:00:00Z",
        "producer": "https://example.com/bench",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "bench", "name": "wide"},
        "inputs": datasets("in"),
        "outputs": datasets("out"),
    }


def column_event(count: int) -> dict:
    payload = event(1)
    payload["outputs"][0]["facets"] = {
        "columnLineage": {
            "_producer": "https://example.com/bench",
            "_schemaURL": "https://example.com/f",
            "fields": {
                "total": {
                    "inputFields": [
                        {
                            "namespace": "bench",
                            "name": "in0",
                            "field": "amount",
                            "transformations": [
                                {
                                    "type": "DIRECT",
                                    "subtype": "TRANSFORMATION",
                                    "description": f"t{index}",
                                }
                                for index in range(count)
                            ],
                        }
                    ]
                }
            },
        }
    }
    return payload


def columns(count: int) -> None:
    from django.db.models import Max

    from catalog.lineage import currency
    from catalog.lineage.graph import lineage_graph
    from catalog.lineage.request import GraphRequest, NodeRef
    from catalog.models import ColumnLineageEdge, Dataset
    from catalog.services.derive import derive_events
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    payload = column_event(count)
    derive_events([stored.id for stored in record_events([validate_openlineage(payload)])])
    edges = dict(ColumnLineageEdge.objects.values_list("id", "job_id")[:40_000])
    began = time.perf_counter()
    current = currency.current_column_edges(edges)
    print(
        f"currency of {len(edges)} column edges: {time.perf_counter() - began:.2f}s, "
        f"{len(current)} current"
    )
    root = Dataset.objects.filter(aliases__name="in0").aggregate(Max("id"))["id__max"]
    began = time.perf_counter()
    graph = lineage_graph(GraphRequest(NodeRef("dataset", root), max_nodes=2000, columns=True))
    seconds = time.perf_counter() - began
    size = len(orjson.dumps(graph.column_edges, default=str))
    print(
        f"{count} transformations, {len(orjson.dumps(payload)) / 1024 / 1024:.1f} MB event: "
        f"graph with columns in {seconds:.2f}s, {len(graph.column_edges or [])} column edges "
        f"({size / 1024 / 1024:.1f} MB), truncated {graph.truncated}, cut {graph.cut}"
    )


def declared(size: int) -> None:
    from catalog.lineage.graph import lineage_graph
    from catalog.lineage.request import GraphRequest, NodeRef
    from catalog.models import Job
    from catalog.services.derive import derive_events
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    payload = event(size)
    del payload["run"], payload["eventType"]
    payload["schemaURL"] = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"
    derive_events([stored.id for stored in record_events([validate_openlineage(payload)])])
    began = time.perf_counter()
    graph = lineage_graph(GraphRequest(NodeRef("job", Job.objects.get().id)))
    print(
        f"JobEvent declaring {size}x{size}, {len(orjson.dumps(payload)) / 1024:.0f} KB: graph of "
        f"the job (default bounds) in {time.perf_counter() - began:.2f}s, "
        f"{len(graph.nodes)} nodes, truncated {graph.truncated}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500, help="inputs, and outputs (each)")
    parser.add_argument("--transformations", type=int, default=0, help="column edges instead")
    parser.add_argument("--declared", action="store_true", help="a JobEvent of --size instead")
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    options = parser.parse_args()

    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(options.database)
    if options.declared:
        declared(options.size)
        return
    if options.transformations:
        columns(options.transformations)
        return
    from catalog.models import JobLineageEdge, LineageEdge, Run
    from catalog.services.derive import derive_events
    from ingest.services import record_events
    from ingest.validation import validate_openlineage

    payload = event(options.size)
    ids = [stored.id for stored in record_events([validate_openlineage(payload)])]
    began = time.perf_counter()
    derive_events(ids)
    seconds = time.perf_counter() - began
    run = Run.objects.get()
    print(
        f"{options.size}x{options.size} event, {len(orjson.dumps(payload)) / 1024:.0f} KB: "
        f"derived in {seconds:.2f}s; lineage edges {LineageEdge.objects.count()}, "
        f"cut {getattr(run, 'lineage_edges_cut', 'n/a')}, "
        f"job edges {JobLineageEdge.objects.count()}"
    )


if __name__ == "__main__":
    main()

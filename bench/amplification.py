"""Worker time and rows for one event naming many inputs and outputs (issue 38, item 4).

    .venv/bin/python bench/amplification.py --size 500

Stores one COMPLETE event of a job with ``size`` inputs and ``size`` outputs, derives it as
the worker does, and prints the event's bytes, the seconds derivation took and the rows it
made: dataset → dataset lineage edges (capped by LINEAGE_MAX_RUN_EDGES, the cut counted on
the run) and job ↔ dataset edges (every input and output). The database is made anew.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500, help="inputs, and outputs (each)")
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    options = parser.parse_args()

    from bench.common import migrated_django_without_broker

    migrated_django_without_broker(options.database)
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

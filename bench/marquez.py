"""The Marquez-compatible mount's latency over HTTP, first pages against deep pages.

Builds the same generated store as bench/read.py (jobs, runs, datasets with aliases and
columns, lineage edges, raw events; generate_series SQL) in its own scratch database,
lineage_bench_marquez, starts the shipped web server on 127.0.0.1, and measures sequential
keep-alive requests to /marquez/api/v1/ the way Marquez's UI and client make them:

  namespaces, datasets of a namespace at offset 0 and near the end, jobs at offset 0 and
  9,000, jobs by last run state, one dataset, the lineage graph at the client's depth 20
  (clamped to 10), events at offset 0 and 10,000, search

and prints p50/p95 (ms) for each. A deep page must cost about what the first one does:
offsets are capped at 10,000 and totalCount is estimated above 10,000 rows. Usage:
  .venv/bin/python bench/marquez.py [--datasets 50000] [--events 300000] [--requests 100]
                                    [--reuse]
"""

import argparse
import random
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_latencies, running_server
from bench.read import JOBS, add_store_arguments, built_read_store

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_marquez"
NAMESPACES = 20  # bench/read.py spreads datasets over postgres://db0:5432 .. db19


def q(text: str) -> str:
    return quote(text, safe="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=300_000, datasets=50_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="Keep an already built store.")
    options = parser.parse_args()
    env, token = built_read_store(DATABASE, options, f"{JOBS:,} jobs in lineage_bench_marquez")
    rng = random.Random(13)
    n = options.requests
    per_namespace = options.datasets // NAMESPACES
    base = "/marquez/api/v1"

    def dataset_path(i: int) -> str:
        return f"{base}/namespaces/{q(f'postgres://db{i % NAMESPACES}:5432')}/datasets/" + q(
            f"schema_{i % 50}.table_{i}"
        )

    def namespace(i: int) -> str:
        return f"{base}/namespaces/{q(f'postgres://db{i % NAMESPACES}:5432')}/datasets"

    scenarios = {
        "namespaces": [f"{base}/namespaces" for _ in range(n)],
        "datasets offset 0": [
            f"{namespace(rng.randint(0, 19))}?limit=20&offset=0" for _ in range(n)
        ],
        f"datasets offset ~{per_namespace - 40:,}": [
            f"{namespace(rng.randint(0, 19))}?limit=20&offset={per_namespace - 40}"
            for _ in range(n)
        ],
        "jobs offset 0": [f"{base}/namespaces/airflow/jobs?limit=25&offset=0" for _ in range(n)],
        "jobs offset 9,000": [
            f"{base}/namespaces/airflow/jobs?limit=25&offset=9000" for _ in range(n)
        ],
        "jobs lastRunStates=FAILED": [
            f"{base}/jobs?limit=25&offset=0&lastRunStates=FAILED" for _ in range(n)
        ],
        "dataset": [dataset_path(rng.randint(1, options.datasets)) for _ in range(n)],
        "lineage depth 20 (clamped)": [
            f"{base}/lineage?nodeId="
            + q(f"dataset:postgres://db{i % NAMESPACES}:5432:schema_{i % 50}.table_{i}")
            + "&depth=20"
            for i in (rng.randint(1, options.datasets) for _ in range(n))
        ],
        "events offset 0": [
            f"{base}/events/lineage?limit=100&offset=0&sortDirection=desc" for _ in range(n)
        ],
        "events offset 10,000": [
            f"{base}/events/lineage?limit=100&offset=10000&sortDirection=desc" for _ in range(n)
        ],
        "search": [
            f"{base}/search?q=table_{rng.randint(1, options.datasets)}&sort=NAME&limit=100"
            for _ in range(n)
        ],
    }
    with running_server(env, workers=options.workers, threads=1) as url:
        print_latencies(url, token, scenarios, f"{options.workers} workers")


if __name__ == "__main__":
    main()

"""Server CPU per read request, by kind, on a store the soak left behind.

The soak (bench/soak.py) reads five kinds of page while it ingests; on two cores their CPU
decides whether the machine reaches the default load. This starts the shipped web server
(or another of bench.common.SERVERS) on that store, with nothing else running, and sends
each kind sequentially over one keep-alive connection: it prints the server's CPU and the
wall time per request, and the answer's size.

Usage: .venv/bin/python -m bench.read_cpu [--database-url URL] [--requests 100]
       [--server granian|gunicorn-gthread]
Run bench/soak.py first (its store is lineage_soak); nothing is written but a read token.
"""

import argparse
import http.client
import random
import time
from collections.abc import Callable

import psycopg

from bench.common import SERVERS, bench_env, new_token, running_server, server_cpu_seconds
from bench.soak import SEARCH_WORDS


def kinds(dataset_ids: list[int], rng: random.Random) -> dict[str, Callable[[], str]]:
    """The soak's read paths (bench/soak.py ``read_loop``), each a path maker."""

    def dataset() -> int:
        return rng.choice(dataset_ids)

    return {
        "dataset list": lambda: "/api/v1/datasets?limit=50",
        "dataset detail": lambda: f"/api/v1/datasets/{dataset()}",
        "lineage graph depth 3": lambda: (
            f"/api/v1/lineage/graph?node=dataset:{dataset()}&direction=both&depth=3"
        ),
        "search": lambda: f"/api/v1/search?q={rng.choice(SEARCH_WORDS)}",
        "events page": lambda: "/api/v1/events?limit=50",
        "healthz": lambda: "/healthz",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/lineage_soak")
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--server", choices=SERVERS, default="granian")
    args = parser.parse_args()
    env = bench_env(args.database_url)
    with psycopg.connect(args.database_url) as connection:
        # The soak's readers pick from the first page of the dataset list (ordered by id).
        query = "SELECT id FROM catalog_dataset ORDER BY id LIMIT 50"
        ids = [row[0] for row in connection.execute(query)]
    if not ids:
        raise SystemExit(f"no datasets in {args.database_url}: run bench/soak.py first")
    headers = {"Authorization": f"Bearer {new_token(env, 'read', 'read-cpu')}"}
    with running_server(env, server=args.server) as url:
        host, port = url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=60)

        def get(path: str) -> int:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                raise SystemExit(f"{path}: {response.status} {body[:300]!r}")
            return len(body)

        print(f"{args.server}, {args.requests} sequential requests each")
        print(f"{'request':24} {'CPU ms':>8} {'wall ms':>8} {'bytes':>9}")
        for name, path in kinds(ids, random.Random(7)).items():
            for _ in range(10):  # warm-up: caches, connections, plans
                get(path())
            cpu, started, size = server_cpu_seconds(url), time.perf_counter(), 0
            for _ in range(args.requests):
                size += get(path())
            cpu = (server_cpu_seconds(url) - cpu) / args.requests * 1000
            wall = (time.perf_counter() - started) / args.requests * 1000
            print(f"{name:24} {cpu:8.1f} {wall:8.1f} {size // args.requests:9d}", flush=True)


if __name__ == "__main__":
    main()

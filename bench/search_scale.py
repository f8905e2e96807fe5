"""Search at the 10M store's name population, without the 10M events (issue 42 item 3).

Search reads no event (ADR 0106): its cost follows the catalog's names. This builds, in a
scratch database, only what search reads of bench/read.py's generated store — its jobs,
datasets, one alias each and three columns each, made by the same statements (bench/read.py's
``BUILD``, picked by table) — plus the real Spark jobs the curve's derive measurements leave
behind (--spark-events of bench/derive.py's records, stored through ingest's service and
derived by one worker loop: about 740 jobs, as the 10M store held, and the column lineage
and dataset links the phantom penalty reads; with the default 18,000 the search statement's
estimated cost passes jit_above_cost, as ADR 0111 found). Then, through the shipped
web server (config/server.py), it measures the curve's own search requests
(bench/scale_curve.py's ``scenarios``: ``table_<n>`` and the typo ``tabel_<n>``):

- p95 (ms) of --requests sequential keep-alive GETs after ten warm-ups;
- CPU per request of the server and its PostgreSQL backends (bench/scale_reads.py);
- statements, shared buffers and execution ms per request, each statement run again under
  ``EXPLAIN (ANALYZE, BUFFERS)`` (bench/scale_reads.py).

--datasets 100000 is the 10M store's population; 1000000 is ten times it. Usage:

  .venv/bin/python -m bench.search_scale --database postgres://…/lc_search_100k \
      [--datasets 100000] [--requests 200] [--samples 5] [--reuse]
"""

import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BIN, ROOT, bench_env, migrated_database, new_token, running_server
from bench.read import BUILD, JOBS, add_store_arguments
from bench.scale_curve import read_p95, scenarios
from bench.scale_reads import buffers_per_request, cpu_per_request

# What search reads: names (jobs, aliases, columns) and the datasets they belong to.
NAMED = ("catalog_job", "catalog_dataset", "catalog_dataset_alias", "catalog_dataset_field")
# The curve's derive measurements, in a process bound to the store (Django binds one
# database per process): real Spark jobs, named as Spark's integration names them.
SPARK = """
import sys
from bench.common import migrated_django_without_broker
migrated_django_without_broker(sys.argv[1], fresh=False)
from bench.derive import _drain, _records
from ingest.services import record_events
records = _records(int(sys.argv[2]), seed=int(sys.argv[3]))
for start in range(0, len(records), 1000):
    record_events(records[start : start + 1000])
print(_drain(500))
"""


def named_statements() -> list[str]:
    """bench/read.py's statements that fill the tables search reads, in its order."""
    picked = []
    for statement in BUILD:
        found = re.search(r"INSERT INTO (\w+)", statement)
        if found and found.group(1) in NAMED:
            picked.append(statement)
    return picked


def build(database: str, datasets: int, spark_events: int) -> dict[str, str]:
    env = migrated_database(database)
    values = {"datasets": datasets, "jobs": JOBS}
    with psycopg.connect(database, autocommit=True) as connection:
        for statement in named_statements():
            started = time.monotonic()
            connection.execute(statement, values)
            table = re.search(r"INSERT INTO (\w+)", statement).group(1)
            print(f"  {table}: {time.monotonic() - started:.1f}s", flush=True)
    for seed in range(1, 1 + (spark_events + 1999) // 2000):
        count = min(2000, spark_events - (seed - 1) * 2000)
        subprocess.run(
            [str(BIN / "python"), "-c", SPARK, database, str(count), str(seed)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_store_arguments(parser, events=0, datasets=100_000)
    parser.add_argument("--database", required=True)
    parser.add_argument("--spark-events", type=int, default=18000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5, help="requests EXPLAINed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reuse", action="store_true", help="keep the store already built")
    options = parser.parse_args()
    if options.reuse:
        env = bench_env(options.database)
    else:
        started = time.monotonic()
        print(f"building {options.datasets:,} datasets' names ...", flush=True)
        env = build(options.database, options.datasets, options.spark_events)
        print(f"built in {time.monotonic() - started:.0f}s", flush=True)
    with psycopg.connect(options.database) as connection:
        jobs, aliases, columns = connection.execute(
            "SELECT (SELECT count(*) FROM catalog_job), (SELECT count(*) FROM "
            "catalog_dataset_alias), (SELECT count(*) FROM catalog_dataset_field)"
        ).fetchone()
    token = new_token(env, "read", "search-scale")
    paths = {"search": scenarios(options, random.Random(options.seed))["search"]}
    with running_server(env, start_seconds=180) as url:
        p95 = read_p95(url, token, paths)["search"]
        cpu = cpu_per_request(url, token, paths, options.database)["search"]
    os.environ.update(env)
    import django

    django.setup()
    spent = buffers_per_request(options.database, token, paths, options.samples)["search"]
    print(
        f"search over {aliases:,} aliases, {jobs:,} jobs, {columns:,} columns "
        f"(load {os.getloadavg()[0]:.1f}): p95 {p95:.1f} ms; CPU {cpu['python_ms']:.1f} ms "
        f"server + {cpu['backend_ms']:.1f} ms PostgreSQL (wall p50 {cpu['wall_p50_ms']:.1f}); "
        f"{spent['statements']:.0f} statements, {spent['buffers']:,.0f} buffers "
        f"({spent['read_buffers']:,.0f} outside shared_buffers), "
        f"{spent['execution_ms']:.1f} ms executing"
    )
    for relation, blocks in spent["by_relation"].items():
        print(f"    {relation}: {blocks:,.0f} buffers")


if __name__ == "__main__":
    main()

"""Each statement of a read, replayed alone: its PostgreSQL CPU run and planned (issue 42).

``bench/read_request_cpu.py`` gives a read's CPU per request; this says which statement
spends it. For each of bench/read.py's reads asked for, it calls the shipped WSGI
application in process (``read_request_cpu.in_process_reader``) for the same paths and
captures every statement as sent (Django's ``CaptureQueriesContext``: values bound in, as
the client-side cursor sends them), groups them by their opening words, then replays each
group on one psycopg connection of its own: the backend CPU of running them
(``/proc/<backend pid>/stat``) and of ``EXPLAIN`` alone (parsing and planning), per
statement and per request. Sessions of ADRs 0125 and 0128 wrote this as throwaway
harnesses.

Usage: .venv/bin/python bench/read_statements_cpu.py --database URL [--requests 40]
       [--rounds 3] [--only NAME ...]
"""

import argparse
import os
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.read import against_bare
from bench.read_request_cpu import backend_cpu_ms, in_process_reader

_WORDS = 6  # a statement's group: its first words, whitespace folded, values left out
_VALUES = re.compile(r"'(?:[^']|'')*'|\b\d+\b")


def group_of(sql: str) -> str:
    return " ".join(_VALUES.sub("?", sql).split()[:_WORDS])[:70]


def replayed(
    connection: psycopg.Connection, statements: list[str], rounds: int
) -> tuple[float, float]:
    """Backend CPU ms per statement: run as sent, and ``EXPLAIN`` alone."""
    pid = connection.info.backend_pid
    for sql in statements[:3]:  # warm: catalog caches, buffers
        connection.execute(sql).fetchall()
    started = backend_cpu_ms(pid)
    for _ in range(rounds):
        for sql in statements:
            connection.execute(sql).fetchall()
    run = (backend_cpu_ms(pid) - started) / (rounds * len(statements))
    started = backend_cpu_ms(pid)
    for _ in range(rounds):
        for sql in statements:
            connection.execute("EXPLAIN " + sql).fetchall()
    return run, (backend_cpu_ms(pid) - started) / (rounds * len(statements))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="passes over each group")
    parser.add_argument("--only", nargs="*", default=["graph, dataset root", "graph, job root"])
    options = parser.parse_args()
    # Captured unprepared: Django logs a statement a kept cursor prepared with its ``$1``
    # placeholders, which the replay cannot run (it failed on the root check, ADR 0139).
    # The replay runs every statement as sent, unprepared, either way.
    os.environ["LINEAGE_PREPARE_READS"] = "false"
    call = in_process_reader(options.database, "read-statements-cpu")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    pick = argparse.Namespace(
        requests=options.requests + 1, datasets=options.datasets, database=options.database
    )
    scenarios = against_bare(pick, random.Random(11))
    with psycopg.connect(options.database, autocommit=True) as replay:
        replay.execute("SET TimeZone = 'UTC'")  # as Django's connections are
        for name in options.only:
            pairs = scenarios[name]
            call(pairs[0].path)  # the first request of a process sets its session up
            groups: dict[str, list[str]] = defaultdict(list)
            for pair in pairs[1:]:
                with CaptureQueriesContext(connection) as queries:
                    call(pair.path)
                for query in queries.captured_queries:
                    groups[group_of(query["sql"])].append(query["sql"])
            requests = len(pairs) - 1
            print(f"\n{name}: {requests} requests, backend CPU ms (load {bare_reads.load()})")
            print(f"{'statement opening':72} {'/req':>5} {'run':>7} {'planned':>8}")
            total = 0.0
            for opening, statements in groups.items():
                run, planned = replayed(replay, statements, options.rounds)
                per_request = len(statements) / requests
                total += run * per_request
                print(f"{opening:72} {per_request:5.2f} {run:7.2f} {planned:8.2f}", flush=True)
            print(f"{'all, per request':72} {'':5} {total:7.2f}")


if __name__ == "__main__":
    main()

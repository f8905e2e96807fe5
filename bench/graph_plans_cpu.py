"""The graph's statements with their values bound on the server and prepared: backend CPU
by custom and by generic plan, beside the statement as Django sends it (issue 42, ADR 0133).

``bench/read_statements_cpu.py`` replays what Django sends, values in the text. This
captures the statements the graph sends through ``core.prepared.read_cursor`` with their
parameters (the shipped WSGI application in process, as ``read_request_cpu`` calls it), then
replays each group of them on one psycopg connection of its own, three ways, alternated
per round: the text with the values bound in (``psycopg.ClientCursor``, what Django's cursor
sends), and prepared with the values apart under ``plan_cache_mode`` ``force_custom_plan``
(planned for each request's values) and ``force_generic_plan`` (planned once per
connection, the plan PostgreSQL may keep after five executions). Backend CPU per statement
from ``/proc/<pid>/stat``; the medians of the rounds.

Only for a tree whose graph statements go through ``read_cursor`` (nothing is captured on
one that sends them through Django's cursor).

Usage: .venv/bin/python bench/graph_plans_cpu.py --database URL [--requests 40]
       [--rounds 5] [--datasets 480]
"""

import argparse
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bare_reads
from bench.read import against_bare
from bench.read_request_cpu import backend_cpu_ms, in_process_reader
from bench.read_statements_cpu import group_of

_MODES = ("as sent", "custom", "generic")


def _run(
    connection: psycopg.Connection, cursor: Any, mode: str, statements: list[tuple[str, Any]]
) -> float:
    """Backend CPU ms per statement of one pass over ``statements`` in ``mode``."""
    pid = connection.info.backend_pid
    if mode != "as sent":
        connection.execute(f"SET plan_cache_mode = force_{mode}_plan")
    started = backend_cpu_ms(pid)
    for sql, params in statements:
        if mode == "as sent":
            cursor.execute(sql, params)
        else:
            connection.execute(sql, params, prepare=True).fetchall()
        if mode == "as sent":
            cursor.fetchall()
    spent = backend_cpu_ms(pid) - started
    if mode != "as sent":
        connection.execute("DEALLOCATE ALL")
        connection.execute("RESET plan_cache_mode")
    return spent / len(statements)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=["graph, dataset root", "graph, job root"])
    options = parser.parse_args()
    call = in_process_reader(options.database, "graph-plans-cpu")
    from core import prepared

    captured: list[tuple[str, Any]] = []
    original = prepared.PreparingCursor.execute

    def capturing(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        captured.append((query, params))
        return original(self, query, params, **kwargs)

    prepared.PreparingCursor.execute = capturing  # type: ignore[method-assign]
    pick = argparse.Namespace(
        requests=options.requests + 1, datasets=options.datasets, database=options.database
    )
    scenarios = against_bare(pick, random.Random(11))
    with psycopg.connect(options.database, autocommit=True) as replay:
        replay.execute("SET TimeZone = 'UTC'")  # as Django's connections are
        replay.prepare_threshold = 2**62  # prepared only when asked (core.prepared)
        text_cursor = psycopg.ClientCursor(replay)
        for name in options.only:
            pairs = scenarios[name]
            call(pairs[0].path)  # the first request of a process sets its session up
            del captured[:]
            for pair in pairs[1:]:
                call(pair.path)
            groups: dict[str, list[tuple[str, Any]]] = defaultdict(list)
            for sql, params in captured:
                groups[group_of(sql)].append((sql, params))
            requests = len(pairs) - 1
            print(f"\n{name}: {requests} requests, backend CPU ms per statement, medians")
            print(f"{'statement opening':62} {'/req':>5} " + " ".join(f"{m:>8}" for m in _MODES))
            totals = dict.fromkeys(_MODES, 0.0)
            for opening, statements in groups.items():
                for mode in _MODES:  # warm: catalog caches, buffers
                    _run(replay, text_cursor, mode, statements[:3])
                figures: dict[str, list[float]] = {mode: [] for mode in _MODES}
                for _ in range(options.rounds):
                    for mode in _MODES:
                        figures[mode].append(_run(replay, text_cursor, mode, statements))
                per_request = len(statements) / requests
                medians = {mode: statistics.median(figures[mode]) for mode in _MODES}
                for mode in _MODES:
                    totals[mode] += medians[mode] * per_request
                print(
                    f"{opening[:62]:62} {per_request:5.2f} "
                    + " ".join(f"{medians[m]:8.2f}" for m in _MODES),
                    flush=True,
                )
            print(
                f"{'all, per request':62} {'':5} "
                + " ".join(f"{totals[m]:8.2f}" for m in _MODES)
                + f"  load {bare_reads.load()}"
            )


if __name__ == "__main__":
    main()

"""ADR 0119's changes against their absence, in one process, alternating in blocks: CPU
per read request that the load hardly moves (issue 42).

``before``: django-filter's own backend (a filterset built for every list request), the
run list's rows queryset built for each request (main's ``_run_page``) and the dataset
detail's fixed reads not prepared (``LINEAGE["PREPARE_READS"]`` off); ``after``:
``api.filters.FilterBackend``, ``RUN_ROWS`` built once and the reads prepared on the kept
connection. Both run the
shipped WSGI application in this process with production settings, on a store
bench/read.py built, alternating every ``--block`` requests so both see the same minutes.
Printed per request: the Python thread's CPU and the PostgreSQL backend's
(``/proc/<pid>/schedstat``, nanoseconds), and the statements.

Usage: .venv/bin/python bench/fixed_cost_cpu.py --database URL [--datasets 480]
       [--blocks 10] [--block 20]
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.read import cursor_at
from bench.read_request_cpu import in_process_reader


def backend_ns(pid: int) -> int:
    """Nanoseconds process ``pid`` has run on a CPU (its schedstat's first field)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    parser.add_argument("--blocks", type=int, default=10, help="blocks of each variant")
    parser.add_argument("--block", type=int, default=20, help="requests per block")
    options = parser.parse_args()
    call = in_process_reader(options.database, "fixed-cost-cpu")
    from django.conf import settings
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django_filters.rest_framework import DjangoFilterBackend

    from api.base import ReadOnlyViewSet
    from api.filters import FilterBackend
    from api.list_rows import run_item
    from api.views import catalog as views
    from catalog.models import Run

    rng = random.Random(7)

    run_page, model_queryset = views._run_page, Run.objects.for_list()

    def main_run_page(view: Any, kept: Any = None) -> Any:  # 0119's before: rows after filters
        rows = view.filter_queryset(view.get_queryset()).list_rows()
        return view.get_paginated_response([run_item(row) for row in view.paginate_queryset(rows)])

    def variant(after: bool) -> None:
        ReadOnlyViewSet.filter_backends = [FilterBackend if after else DjangoFilterBackend]
        views.RunViewSet.queryset = views.RUN_ROWS if after else model_queryset
        views._run_page = run_page if after else main_run_page
        settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": after}

    reads = {
        "dataset detail": lambda: f"/api/v1/datasets/{rng.randint(1, options.datasets)}",
        "runs, deep cursor page": lambda: (
            f"/api/v1/runs?limit=50&cursor={cursor_at(rng.randint(40_000, 60_000))}"
        ),
        "runs?limit=1": lambda: "/api/v1/runs?limit=1",
        "datasets?limit=1": lambda: "/api/v1/datasets?limit=1",
    }
    print(f"{'read':24} {'variant':7} {'python ms':>9} {'backend ms':>10} {'stmts':>5}  load")
    for name, path in reads.items():
        totals = {False: [0, 0, 0], True: [0, 0, 0]}
        statements = {}
        for after in (False, True):
            variant(after)
            for _ in range(10):  # warm: connection, prepared statements, caches
                call(path())
            with CaptureQueriesContext(connection) as queries:
                call(path())
            statements[after] = len(queries)
        pid = connection.connection.info.backend_pid
        for block in range(2 * options.blocks):
            after = bool(block % 2)
            variant(after)
            call(path())  # the variant's first request after a switch is not counted
            started, backend_started = time.thread_time_ns(), backend_ns(pid)
            for _ in range(options.block):
                call(path())
            totals[after][0] += time.thread_time_ns() - started
            totals[after][1] += backend_ns(pid) - backend_started
            totals[after][2] += options.block
        load = " ".join(f"{value:.2f}" for value in os.getloadavg())
        for after in (False, True):
            python, backend, count = totals[after]
            print(
                f"{name:24} {'after' if after else 'before':7} {python / count / 1e6:9.2f}"
                f" {backend / count / 1e6:10.2f} {statements[after]:5}  {load}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""The event list sorted by a column typed into the address (``?o=``), before and after
ADR 0193: a scratch store of N events (200,000 by default), the page asked for by a
logged-in superuser in this process, and PostgreSQL's own time for the page's statement.

"before" puts Django's ``ChangeList.get_ordering_field`` back (every column of
``list_display`` sorts, ``sortable_by`` or not); "after" is the code as it is.

Usage: .venv/bin/python bench/admin_orders.py --database postgres://.../scratch [--events N]
       [--repeat 5]
Prints, for each order and each side, the page's median milliseconds, the statement's
EXPLAIN ANALYZE execution time and whether its plan sorts.
"""

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import migrated_django_without_broker

EVENTS = """
INSERT INTO ingest_event (received_at, kind, event_type, event_time, run_id, job_namespace,
    job_name, producer, payload, digest, derivation_status)
SELECT timestamptz '2026-11-01' + (g::bigint * 7919 %% %(count)s) * interval '1 second', 'run',
       'COMPLETE', timestamptz '2026-11-01' + g * interval '1 second', md5(g::text),
       'bench', 'job_' || (g %% 50), 'https://example.com/bench',
       jsonb_build_object('eventType', 'COMPLETE',
                          'run', jsonb_build_object('runId', md5(g::text))),
       sha256(g::text::bytea), 'derived'
FROM generate_series(1, %(count)s) AS g
"""


def fill(count: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(EVENTS, {"count": count})
        cursor.execute("ANALYZE ingest_event")


def statement_ms(changelist: Any) -> tuple[float, bool]:
    """EXPLAIN ANALYZE of the page's statement: execution ms and whether it sorts."""
    from django.db import connection

    page = changelist.queryset[: changelist.list_per_page]
    sql, params = page.query.get_compiler(using=page.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN ANALYZE " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    took = re.search(r"Execution Time: ([\d.]+) ms", plan)
    assert took is not None, plan
    return float(took.group(1)), bool(re.search(r"(?<!Incremental )Sort ", plan))


def measure(client: Any, path: str, repeat: int) -> tuple[float, float, bool]:
    times, statements = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code}")
        took, sorts = statement_ms(response.context["cl"])
        statements.append(took)
    return statistics.median(times), statistics.median(statements), sorts


def main(database: str, count: int, repeat: int) -> None:
    migrated_django_without_broker(database)
    from django.contrib.admin.views.main import ChangeList
    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import setup_test_environment

    from core.admin_base import TimeOrderChangeList

    setup_test_environment()  # the response's context: the page's change list

    started = time.monotonic()
    fill(count)
    print(f"{count:,} events stored in {time.monotonic() - started:.0f} s", flush=True)
    user = User.objects.create(username="bench-admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    columns = client.get("/admin/ingest/event/").context["cl"].list_display
    received = columns.index("received_at")
    ours = TimeOrderChangeList.get_ordering_field
    print(f"{'side':6} {'page':34} {'page ms':>8} {'statement ms':>12}  sorts")
    for path in ("/admin/ingest/event/", f"/admin/ingest/event/?o=-{received}"):
        for side in ("before", "after"):
            TimeOrderChangeList.get_ordering_field = (  # type: ignore[method-assign]
                ChangeList.get_ordering_field if side == "before" else ours
            )
            page, statement, sorts = measure(client, path, repeat)
            print(f"{side:6} {path:34} {page:8.1f} {statement:12.1f}  {sorts}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    main(arguments.database, arguments.events, arguments.repeat)

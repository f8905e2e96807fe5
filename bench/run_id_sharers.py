"""``/runs/{runId}?job_id=`` when many jobs sent one text runId (ADR 0196), and the reads
of a runId's sharers without it (ADR 0202).

Builds with SQL ``--sharers`` jobs that each sent the runId ``scheduled__2026-01-01`` (one
run each, its key uuid5 over the job's names and the runId, as derivation keys it), the last
job with ``--job-runs`` runs of other runIds, beside ``--other-runs`` runs of other runIds of
another job; then replays under ``EXPLAIN (ANALYZE, BUFFERS)`` the statements that find the
last job's run: before this decision, the job picked among the runs ``Run.objects.named``
returns (its first 20 by id); now the job's names, then the run by its key; and, for
comparison, a filter on the text and the job without the key. Prints each one's rows found,
the rows each scan read, the buffers and the execution milliseconds, and the detail's own
``named`` read (no ``job_id``), with bitmap scans allowed and not.

ADR 0202: the same jobs also sent one UUID runId; the detail's own statements without
``job_id`` (its run, its ``same_run_id_runs``) with ``named`` as it was and as it is, the
admin event page's sharers of the text and of the UUID, ``/events/{id}``'s
``run_id_shared_with`` of the UUID, the statements a deletion runs to unflag a runId left
alone, and the data migration's pass over the store (seconds, rows changed).

Usage: .venv/bin/python bench/run_id_sharers.py --database URL [--sharers 1000]
       [--job-runs 10000] [--other-runs 100000] [--reuse]
"""

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_JOBS, migrated_django_without_broker
from catalog.names import naming

RUN_ID = "scheduled__2026-01-01"
UUID_RUN_ID = "5f7a1b1e-0000-4000-8000-000000000202"

# %(count)s runs of job %(job)s, runIds %(prefix)s1...
_RUNS = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    error_message, is_streaming, facets, facet_versions, job_version, updated_at,
    shares_run_id, tags)
SELECT gen_random_uuid(), %(prefix)s || i, %(job)s, false, 'COMPLETE', '[]', '', false, '{}',
    '{}', '[]', now(), false, '[]'
FROM generate_series(1, %(count)s) AS i
"""
_SHARED = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    error_message, is_streaming, facets, facet_versions, job_version, updated_at,
    shares_run_id, tags)
VALUES (%(key)s, %(run_id)s, %(job)s, false, 'COMPLETE', '[]', '', false, '{}', '{}', '[]',
    now(), true, '[]')
"""


def build(database: str, sharers: int, job_runs: int, other_runs: int) -> None:
    with psycopg.connect(database, autocommit=True) as connection:
        connection.execute(BENCH_JOBS, {"jobs": sharers})
        jobs = connection.execute(
            "SELECT id, namespace, name FROM catalog_job ORDER BY id"
        ).fetchall()
        other, *sending = jobs
        connection.execute(_RUNS, {"prefix": "other-", "job": other[0], "count": other_runs})
        with connection.cursor() as cursor:
            cursor.executemany(
                _SHARED,
                [
                    {"key": naming.run_uuid(RUN_ID, namespace, name), "run_id": RUN_ID, "job": id_}
                    for id_, namespace, name in sending
                ],
            )
            cursor.executemany(
                _SHARED,
                [{"key": UUID_RUN_ID, "run_id": UUID_RUN_ID, "job": id_} for id_, _, _ in sending],
            )
        connection.execute(_RUNS, {"prefix": "last-", "job": sending[-1][0], "count": job_runs})
        connection.execute("ANALYZE catalog_run")
        connection.execute("ANALYZE catalog_job")


def measure(label: str, queryset: Any) -> None:
    from django.db import connection

    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]
    reads: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        if "Relation Name" in node:
            read = (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node[
                "Actual Loops"
            ]
            where = node.get("Index Name", node["Relation Name"])
            reads.append(f"{node['Node Type']} {where} {int(read)}")
        for child in node.get("Plans", []):
            walk(child)

    top = plan["Plan"]
    walk(top)
    buffers = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
    print(
        f"{label}: found {top['Actual Rows']}, read {'; '.join(reads)}, buffers {buffers}, "
        f"{plan['Execution Time']:.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--sharers", type=int, default=1000)
    parser.add_argument("--job-runs", type=int, default=10_000)
    parser.add_argument("--other-runs", type=int, default=100_000)
    parser.add_argument("--reuse", action="store_true", help="the store a run before built")
    options = parser.parse_args()
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    migrated_django_without_broker(options.database, fresh=not options.reuse)
    if not options.reuse:
        build(options.database, options.sharers, options.job_runs, options.other_runs)
    from django.db import connection

    from api.views.run_links import runs_named
    from catalog.models import Job, Run

    job = Job.objects.order_by("-id").first()
    assert job is not None
    rows = Run.objects.all()
    picked = runs_named(RUN_ID).filter(job_id=job.id).values("id")[:1]
    keyed = Run.objects.named_in_job(RUN_ID, job.id).values("id")[:1]
    unkeyed = Run.objects.filter(run_id_text=RUN_ID, job_id=job.id).values("id")[:1]
    for _ in range(2):  # the second with the pages in memory
        measure("before: the job among named's first 20", rows.filter(id__in=picked))
        measure("now: the job's names", Job.objects.filter(pk=job.id).values("namespace", "name"))
        measure("now: the run by its key", rows.filter(id__in=keyed))
        measure("the text and the job, no key", rows.filter(id__in=unkeyed))
        measure("the detail's named(), no job_id", Run.objects.named(RUN_ID).values("id"))
    with connection.cursor() as cursor:
        cursor.execute("SET enable_bitmapscan = off")
    measure("the detail's named(), bitmap scans off", Run.objects.named(RUN_ID).values("id"))
    with connection.cursor() as cursor:
        cursor.execute("RESET enable_bitmapscan")
    sharers(job)


def sharers(job: Any) -> None:
    """ADR 0202's reads, each twice (the second with the pages in memory)."""
    import time

    from django.db.models import Value
    from django.db.models.functions import MD5
    from django.db.models.lookups import Exact

    from api.views.run_links import runs_named
    from catalog.models import Run
    from catalog.services.derivation import run_conflicts

    ordered = ("is_placeholder", "job__namespace", "job__name", "id")
    kept_as_sent = Exact(MD5("run_id_text"), MD5(Value(RUN_ID)))
    first = Run.objects.filter(kept_as_sent, run_id_text=RUN_ID).order_by("id").values("id")
    before = Run.objects.filter(id__in=first[:20]).order_by(*ordered)
    rows = Run.objects.all()
    shown = runs_named(RUN_ID).first()
    assert shown is not None
    for _ in range(2):
        for when, named in (("before", before), ("now", runs_named(RUN_ID))):
            measure(f"{when}: the detail's run", rows.filter(id__in=named.values("id")[:1]))
            others = named.exclude(id=shown.id).select_related("job")[:20]
            measure(f"{when}: the detail's same_run_id_runs", others)
        for what, run_id in (("text", RUN_ID), ("UUID", UUID_RUN_ID)):
            admin = Run.objects.named(run_id, jobs_limit=22).select_related("job")
            measure(f"the admin event page's sharers, {what}", admin.order_by("job_id")[:22])
        api = (
            Run.objects.named(UUID_RUN_ID, jobs_limit=21)
            .filter(shares_run_id=True)
            .exclude(job_id=job.id)
            .select_related("job")
            .order_by("job__namespace", "job__name", "id")[:20]
        )
        measure("/events/{id}'s run_id_shared_with, UUID", api)
    from django.db import connection, transaction

    for what, statement, values in (
        ("a deletion's unflag, the text still shared", run_conflicts._UNFLAG_TEXTS, [RUN_ID]),
        ("a deletion's unflag, the UUID still shared", run_conflicts._UNFLAG_UUIDS, [UUID_RUN_ID]),
        ("a deletion's unflag, a text left alone", run_conflicts._UNFLAG_TEXTS, ["last-1"]),
    ):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement, [values])
            plan = cursor.fetchone()[0][0]
            transaction.set_rollback(True)
        top = plan["Plan"]
        buffers = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
        print(f"{what}: buffers {buffers}, {plan['Execution Time']:.3f} ms")
    started = time.monotonic()
    changed = run_conflicts.unflag_all_left_alone()
    print(
        f"the data migration's pass ({Run.objects.filter(shares_run_id=True).count()} flagged): "
        f"{changed} changed, {time.monotonic() - started:.2f} s"
    )


if __name__ == "__main__":
    main()

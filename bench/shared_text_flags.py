"""What the flags of a text runId several jobs sent cost (ADR 0201).

Builds with SQL ``--runs`` runs of UUID runIds (each its own text, nothing shared) and, once
those are measured, the runs ``--sharers`` jobs keep of one text runId (unflagged, as stores
derived before the decision hold them); then replays under ``EXPLAIN (ANALYZE, BUFFERS)``
the data migration's walk (``run_conflicts.mark_all_shared_run_texts``: each span's
read and the shared texts it finds, without the UPDATE) and runs it (seconds, rows flagged);
then the recompute a derivation batch makes of the text (``_MARK_TEXTS``, rolled back): with
every flag already right, then flagging every sharer anew. Prints rows and buffers of each.

Usage: .venv/bin/python bench/shared_text_flags.py --database URL [--runs 100000]
       [--sharers 2000] [--span 10000]
"""

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_JOBS, migrated_django_without_broker

TEXT = "scheduled__2026-01-01T00:00:00+00:00"
_RUNS = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    error_message, is_streaming, facets, facet_versions, job_version, updated_at,
    shares_run_id, tags)
SELECT u, u::text, %(job)s, false, 'COMPLETE', '[]', '', false, '{}', '{}', '[]', now(),
    false, '[]'
FROM (SELECT gen_random_uuid() AS u FROM generate_series(1, %(count)s)) AS g
"""
# One run per job of the text, its key uuid5-like (any UUID of its own: only the text joins).
_SHARERS = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    error_message, is_streaming, facets, facet_versions, job_version, updated_at,
    shares_run_id, tags)
SELECT gen_random_uuid(), %(text)s, j.id, false, 'COMPLETE', '[]', '', false, '{}', '{}',
    '[]', now(), false, '[]'
FROM catalog_job j WHERE j.id > (SELECT min(id) FROM catalog_job)
"""


def _explain(cursor: Any, sql: str, params: list[Any]) -> tuple[int, int]:
    """(rows, buffers) of ``sql`` run under EXPLAIN (ANALYZE, BUFFERS)."""
    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
    plan = cursor.fetchone()[0][0]
    top = plan["Plan"]
    buffers = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
    return top["Actual Rows"], buffers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--sharers", type=int, default=2000)
    parser.add_argument("--span", type=int, default=10_000)
    options = parser.parse_args()
    migrated_django_without_broker(options.database)
    from django.db import connection, transaction

    from catalog.services.derivation import run_conflicts

    with connection.cursor() as cursor:
        cursor.execute(BENCH_JOBS, {"jobs": options.sharers})
        cursor.execute("SELECT min(id) FROM catalog_job")
        cursor.execute(_RUNS, {"job": cursor.fetchone()[0], "count": options.runs})
        cursor.execute("VACUUM ANALYZE catalog_run")
        for label, build in (("nothing shared", False), ("one text shared", True)):
            if build:
                cursor.execute(_SHARERS, {"text": TEXT})
                cursor.execute("VACUUM ANALYZE catalog_run")
            spans, buffers, texts, after = 0, 0, 0, 0
            while True:
                cursor.execute(run_conflicts._SPAN, [after, options.span])
                upto, shared = cursor.fetchone()
                if upto is None:
                    break
                buffers += _explain(cursor, run_conflicts._SPAN, [after, options.span])[1]
                spans, texts, after = spans + 1, texts + len(shared or []), upto
            started = time.perf_counter()
            changed = run_conflicts.mark_all_shared_run_texts(options.span)
            seconds = time.perf_counter() - started
            cursor.execute("SELECT pg_relation_size('catalog_run') / 8192")
            pages = cursor.fetchone()[0]
            print(
                f"the migration, {label}, catalog_run {pages} pages: {spans} spans, "
                f"{texts} shared texts found, "
                f"{buffers} buffers (the spans' reads), {changed} rows flagged, "
                f"{seconds:.2f} s"
            )
        for label in ("all flags right", "every sharer flagged anew"):
            with transaction.atomic():
                if label != "all flags right":
                    cursor.execute("UPDATE catalog_run SET shares_run_id = false")
                with transaction.atomic():
                    cursor.execute(run_conflicts._MARK_TEXTS, [[TEXT]])
                    rows = cursor.rowcount
                    transaction.set_rollback(True)
                read = _explain(cursor, run_conflicts._MARK_TEXTS, [[TEXT]])[1]
                transaction.set_rollback(True)
            print(
                f"derivation's recompute of a text of {options.sharers} runs, {label}: "
                f"{rows} rows written, {read} buffers"
            )


if __name__ == "__main__":
    main()

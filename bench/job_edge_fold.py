"""EXPLAIN (ANALYZE, BUFFERS) of the job-edge fold for one batch against an edge with a long
run history (ADR 0025, amendment): the buffers one batch reads must not grow with history.

    DATABASE_URL=... .venv/bin/python bench/job_edge_fold.py --history 10000 100000

Builds, inside a transaction that is rolled back, one job edge with ``history`` runs, then
stores a batch of ``--batch`` new runs' rows the way ``recompute_job_edges`` does and
EXPLAINs the statements every batch runs (delete and insert the batch's rows, the fold)
and the guarded delete of an edge left without runs (``*``: only when a run left an edge;
the full aggregate before it reads the edge's runs by design). Prints the shared buffers
(hit + read) of each; none should grow with the edge's history.
"""

import argparse
import os
import re
import sys

import django

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
django.setup()

from django.db import connection, transaction  # noqa: E402

from catalog.services.derivation import job_edges  # noqa: E402
from catalog.services.derivation.edge_runs import fold_rows  # noqa: E402

_RUN_COLUMNS = """run_uuid, run_id_text, is_placeholder, state, state_version, error_message,
is_streaming, facets, facet_versions, job_version, updated_at, job_id, shares_run_id, tags"""


def _populate(cursor, history: int, batch: int) -> tuple[int, list[int]]:
    """One job edge with ``history`` runs; returns it and ``batch`` further runs' ids."""
    cursor.execute(
        "INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets,"
        " facet_versions, processing_type, job_type, integration, description, updated_at,"
        " owners, tags)"
        " VALUES ('bench', 'job', '\\x00'::bytea, false, '{}', '{}', '', '', '', '', now(),"
        " '[]', '[]')"
        " RETURNING id"
    )
    job = cursor.fetchone()[0]
    cursor.execute(
        "INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,"
        " lifecycle_state, is_dropped, updated_at, display_rank, owners, tags, browse_path)"
        " VALUES ('bench', 'ds', '{}', '{}', '', '', false, now(), 0, '[]', '[]', '')"
        " RETURNING id"
    )
    dataset = cursor.fetchone()[0]
    cursor.execute(
        f"INSERT INTO catalog_run ({_RUN_COLUMNS}) SELECT gen_random_uuid(), g::text, false,"
        " 'COMPLETE', '{}', '', false, '{}', '{}', '{}', now(), %s, false, '[]'"
        " FROM generate_series(1, %s) g",
        [job, history + batch],
    )
    cursor.execute(
        "INSERT INTO catalog_job_edge (job_id, dataset_id, direction, first_seen, last_seen,"
        " run_count) VALUES (%s, %s, 'output', now() - interval '1 year', now(), %s)"
        " RETURNING id",
        [job, dataset, history],
    )
    edge = cursor.fetchone()[0]
    cursor.execute("SELECT id FROM catalog_run WHERE job_id = %s ORDER BY id", [job])
    runs = [row[0] for row in cursor.fetchall()]
    cursor.execute(
        "INSERT INTO catalog_job_edge_run (edge_id, run_id, first_seen, last_seen)"
        " SELECT %s, id, now() - interval '1 day', now() - interval '1 day'"
        " FROM unnest(%s::bigint[]) id",
        [edge, runs[:history]],
    )
    cursor.execute("ANALYZE catalog_job_edge_run; ANALYZE catalog_run; ANALYZE catalog_job_edge")
    return edge, runs[history:]


def _buffers(cursor, sql: str, params: list) -> str:
    cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) " + sql, params)
    plan = "\n".join(row[0] for row in cursor.fetchall())
    if os.environ.get("SHOW_PLAN"):
        print(plan)
    # The top node's buffers (the whole statement, planning excluded).
    for line in plan.splitlines():
        match = re.search(r"Buffers: shared (.*)", line)
        if match:
            shared = match.group(1).split(",")[0]  # not the temp buffers after the comma
            counts = dict(re.findall(r"(hit|read|dirtied|written)=(\d+)", shared))
            return str(int(counts.get("hit", 0)) + int(counts.get("read", 0)))
    return "0"


def measure(history: int, batch: int) -> dict[str, str]:
    figures: dict[str, str] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        edge, new_runs = _populate(cursor, history, batch)
        figures["delete_runs"] = _buffers(cursor, job_edges.JOB_EDGE_RUNS.delete_runs, [new_runs])
        cursor.execute("SELECT now()")
        now = cursor.fetchone()[0]
        figures["insert_runs"] = _buffers(
            cursor,
            job_edges.JOB_EDGE_RUNS.insert_runs,
            # edge, run, first, last, completed (ADR 0069), via
            [[edge] * batch, new_runs, [now] * batch, [now] * batch, [True] * batch, [""] * batch],
        )
        cursor.execute("SELECT run_uuid FROM catalog_run WHERE id = %s", [new_runs[-1]])
        run_uuid = cursor.fetchone()[0]
        # The fold's parameters as recompute_job_edges builds them (edge_runs.fold_rows).
        rows = [(edge, run, now, now, run_uuid, True, "") for run in new_runs]
        fold = fold_rows(rows, {}, set())  # no pair before: every run is new
        params = [list(column) for column in zip(*fold, strict=True)]
        figures["fold"] = _buffers(cursor, job_edges.JOB_EDGE_RUNS.fold, params)
        # Only when a run left the edge (datasets merged or split).
        figures["delete_empty*"] = _buffers(cursor, job_edges.JOB_EDGE_RUNS.delete_empty, [[edge]])
        transaction.set_rollback(True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    print(f"{'runs of the edge':>16} {'statement':>15} {'shared buffers':>15}")
    for history in args.history:
        for name, value in measure(history, args.batch).items():
            print(f"{history:>16} {name:>15} {value:>15}")


if __name__ == "__main__":
    main()

"""edge_added's statement reads its targets' edges, not the edge table (ADR 0106).

Joined to its CTE of targets alone, PostgreSQL merge-joined it with the whole target index
in order: for a batch writing a new dataset (the highest id) it read every edge of the
catalog, 300,000 at bench/scale_curve.py's store, 3-6 s a batch.
"""

from hashlib import md5
from typing import Any

import pytest
from django.db import connection

from catalog.services.derivation import run_changes

pytestmark = pytest.mark.django_db

EDGES_AROUND = 3000  # edges among older datasets, which the batch's target never sees

FILL = [
    """INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets,
        facet_versions, processing_type, job_type, integration, description, first_seen,
        last_seen, updated_at, tags, owners)
       VALUES ('tests', 'load', sha256('load'::bytea), false, '{}', '{}', 'BATCH', 'TASK', '',
               '', now(), now(), now(), '[]', '[]')""",
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
        state_version, started_at, ended_at, error_message, is_streaming, facets,
        facet_versions, job_version, updated_at, first_event_time, last_event_time,
        shares_run_id, tags)
       SELECT md5(i::text)::uuid, md5(i::text)::uuid::text, (SELECT min(id) FROM catalog_job),
              false, 'COMPLETE', '[]', now() - (i || ' minutes')::interval, now(), '', false,
              '{}', '{}', '[]', now(), now(), now(), false, '[]'
       FROM generate_series(1, 2 * %(batch)s) AS i""",
    """INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags,
        owners, browse_path)
       SELECT 'tests', 'table_' || i, '{}', '{}', '', '', false, now(), now(), now(), 2, '[]',
              '[]', ''
       FROM generate_series(1, %(datasets)s) AS i""",
    # Three edges into each older dataset, all days old.
    """INSERT INTO catalog_lineage_edge (source_id, target_id, job_id, first_seen, last_seen,
        last_run_id, run_count, lineage_type, pipeline)
       SELECT s.id, t.id, (SELECT min(id) FROM catalog_job), now() - interval '20 days', now(),
              (SELECT min(id) FROM catalog_run), 1, '', ''
       FROM catalog_dataset t CROSS JOIN generate_series(1, 3) AS k
       JOIN catalog_dataset s ON s.name = 'table_' || (1 + (t.id + k) %% %(datasets)s)
       WHERE t.name <> 'table_' || %(datasets)s""",
    # Their runs: none in the batch, but they give the planner a few edge rows a run.
    """INSERT INTO catalog_lineage_edge_run (edge_id, run_id, first_seen, last_seen)
       SELECT e.id, r.id, e.first_seen, e.last_seen FROM catalog_lineage_edge e
       JOIN catalog_run r ON r.run_uuid = md5((%(batch)s + 1 + e.id %% %(batch)s)::text)::uuid""",
]
BATCH = 300  # runs in the batch; two of them write the newest dataset


def _edge_rows_read(plan: dict[str, Any]) -> int:
    """Edge rows the plan's nodes read, but for the batch's own edges (the CTE ``target``,
    reached from the batch's runs by primary key at any size; at a test's size the planner
    may as well read the few thousand there)."""
    if plan.get("Subplan Name") == "CTE target":
        return 0
    own = 0
    if plan.get("Relation Name") == "catalog_lineage_edge":
        own = plan["Actual Rows"] * plan["Actual Loops"]
    return own + sum(_edge_rows_read(child) for child in plan.get("Plans", []))


def test_a_new_datasets_added_edges_read_only_its_edges() -> None:
    with connection.cursor() as cursor:
        for statement in FILL:
            cursor.execute(statement, {"datasets": EDGES_AROUND // 3, "batch": BATCH})
        # The newest dataset (the highest id) gets a first upstream edge, then a second one
        # a day later, each written by a run of its own.
        cursor.execute(
            "SELECT max(id) FROM catalog_dataset UNION ALL SELECT min(id) FROM catalog_dataset"
        )
        newest, oldest = (row[0] for row in cursor.fetchall())
        cursor.execute(
            "SELECT id FROM catalog_run WHERE run_uuid = ANY(%s) ORDER BY id",
            [[f"{md5(str(i).encode()).hexdigest()}" for i in range(1, BATCH + 1)]],
        )
        runs = [row[0] for row in cursor.fetchall()]
        for offset, (age, run) in enumerate(zip(("2 days", "1 day"), runs[:2], strict=True)):
            cursor.execute(
                """INSERT INTO catalog_lineage_edge (source_id, target_id, job_id, first_seen,
                    last_seen, last_run_id, run_count, lineage_type, pipeline)
                   VALUES (%s, %s, (SELECT min(id) FROM catalog_job), now() - %s::interval,
                           now(), %s, 1, '', '') RETURNING id""",
                [oldest + offset, newest, age, run],
            )
            (edge,) = cursor.fetchone()
            cursor.execute(
                "INSERT INTO catalog_lineage_edge_run (edge_id, run_id, first_seen, last_seen) "
                "VALUES (%s, %s, now() - %s::interval, now())",
                [edge, run, age],
            )
        cursor.execute("ANALYZE")
        # At a test's few thousand edges a sequential scan or a hash of them all is as cheap
        # as any probe; the catalog's hundreds of thousands are what the plan must not read.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_hashjoin = off")
        params = {"runs": runs}
        cursor.execute(run_changes._ADDED, params)
        added = cursor.fetchall()
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + run_changes._ADDED, params)
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    # The answer: the second edge, added after the newest dataset's first one.
    assert [(row[0], row[1]) for row in added] == [(newest, oldest + 1)]
    # The target's two edges, read a few times (its earliest edge, its edges after it),
    # and the batch's two edge rows: never the other datasets' thousands.
    assert _edge_rows_read(plan) <= 20

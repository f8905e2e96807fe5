"""Whether column edges are current reads those edges by key, not the column edge table.

The statement (``catalog.lineage.currency.current_column_edges``) joined the asked edges,
an array, to catalog_column_lineage_edge by id alone; the planner hashed the whole table
for a few hundred of them: 24,000 rows for the 713 readers of a page of 500 changes on
bench/changes.py's store, about half the statement's backend CPU (docs/benchmarks.md,
"/changes' breaks"). The ids are an ANY on the primary key too now, which it reads by.
"""

from typing import Any

import pytest
from django.db import connection

from catalog.lineage import currency

pytestmark = pytest.mark.django_db

JOBS = 200
EDGES = 24_000  # column edges in the catalog
ASKED = 700  # of them asked about: a page of 500's readers there, a few per cent

FILL = [
    """INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets,
        facet_versions, processing_type, job_type, integration, description, first_seen,
        last_seen, updated_at, tags, owners)
       SELECT 'tests', 'job_' || i, sha256(convert_to('job_' || i, 'UTF8')), false, '{}',
              '{}', 'BATCH', 'TASK', '', '', now(), now(), now(), '[]', '[]'
       FROM generate_series(1, %(jobs)s) AS i""",
    """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
        state_version, started_at, error_message, is_streaming, facets, facet_versions,
        job_version, updated_at, shares_run_id, tags)
       SELECT md5(j.id || ':' || i)::uuid, md5(j.id || ':' || i), j.id, false, 'COMPLETE',
              '[]', now() - (i || ' minutes')::interval, '', false, '{}', '{}', '[]', now(),
              false, '[]'
       FROM catalog_job j CROSS JOIN generate_series(1, 3) AS i""",
    """INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags,
        owners, browse_path)
       SELECT 'tests', 'table_' || i, '{}', '{}', '', '', false, now(), now(), now(), 2, '[]',
              '[]', ''
       FROM generate_series(1, 100) AS i""",
    """INSERT INTO catalog_column_lineage_edge (source_id, source_field, target_id,
        target_field, job_id, last_run_id, transformation_type, transformation_subtype,
        transformation_description, masking, key_hash, first_seen, last_seen, run_count)
       SELECT s.id, 'c' || i, t.id, 'c' || i, j.id, (SELECT max(id) FROM catalog_run),
              'DIRECT', 'IDENTITY', '', false, sha256(convert_to(i::text, 'UTF8')), now(),
              now(), 1
       FROM generate_series(1, %(edges)s) AS i
       JOIN catalog_dataset s ON s.name = 'table_' || (1 + i %% 100)
       JOIN catalog_dataset t ON t.name = 'table_' || (1 + (i + 1) %% 100)
       JOIN catalog_job j ON j.name = 'job_' || (1 + i %% %(jobs)s)""",
]


def _edge_rows_read(plan: dict[str, Any]) -> int:
    own = 0
    if plan.get("Relation Name") == "catalog_column_lineage_edge":
        own = (plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)) * plan["Actual Loops"]
    return own + sum(_edge_rows_read(child) for child in plan.get("Plans", []))


def test_the_asked_edges_are_read_by_key() -> None:
    with connection.cursor() as cursor:
        for statement in FILL:
            cursor.execute(statement, {"jobs": JOBS, "edges": EDGES})
        cursor.execute("ANALYZE")
        cursor.execute(
            "SELECT id, job_id FROM catalog_column_lineage_edge ORDER BY id LIMIT %s", [ASKED]
        )
        asked = dict(cursor.fetchall())
    statements: list[tuple[str, Any]] = []

    def caught(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(caught):
        # No fact maps to them: the job's latest completed run did not produce them.
        assert currency.current_column_edges(asked) == set()
    ((sql, params),) = statements
    with connection.cursor() as cursor:
        # Probes priced out: at a test's size the planner may probe the edges one by one,
        # which hides the join it chose at bench/changes.py's, a hash of the whole table.
        cursor.execute("SET LOCAL enable_nestloop = off")
        cursor.execute("SET LOCAL enable_mergejoin = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    assert _edge_rows_read(plan) == ASKED

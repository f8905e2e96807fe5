"""Whether column edges are current reads those edges by key, not the column edge table.

The statement (``catalog.lineage.currency.current_column_edges``) joined the asked edges,
an array, to catalog_column_lineage_edge by id alone; the planner hashed the whole table
for a few hundred of them: 24,000 rows for the 713 readers of a page of 500 changes on
bench/changes.py's store, about half the statement's backend CPU (docs/benchmarks.md,
"/changes' breaks"). The ids are an ANY on the primary key too now, which it reads by.

It reads the reference runs' facts by the unique key and their windows by the run's key,
not by a join the planner reached the facts through the target-alias index for, or every
run for a few (ADR 0176); and it is not JIT-compiled, whatever its estimated cost.
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
    sql = sql.removeprefix(currency.NO_JIT)  # EXPLAIN takes one statement
    with connection.cursor() as cursor:
        # Probes priced out: at a test's size the planner may probe the edges one by one,
        # which hides the join it chose at bench/changes.py's, a hash of the whole table.
        cursor.execute("SET LOCAL enable_nestloop = off")
        cursor.execute("SET LOCAL enable_mergejoin = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    assert _edge_rows_read(plan) == ASKED


# The reference runs' facts and windows, read by key (ADR 0176). Joined to the facts by run
# and key, the planner reached them by the target-alias index and dropped every other
# run's facts of the reader's target (24,654 read for 546 kept, a page of 500 changes on
# bench/changes.py's store), and the windows read every run for the few reference runs.


def _nodes(plan: dict[str, Any], relation: str) -> list[dict[str, Any]]:
    own = [plan] if plan.get("Relation Name") == relation else []
    return own + [node for child in plan.get("Plans", []) for node in _nodes(child, relation)]


def _subplans(plan: dict[str, Any], name: str) -> list[dict[str, Any]]:
    own = [plan] if plan.get("Subplan Name") == name else []
    return own + [node for child in plan.get("Plans", []) for node in _subplans(child, name)]


@pytest.fixture
def bench_store() -> None:
    """bench/changes.py's column lineage at a small size: each reader's fact in its job's
    three newest runs (about 36 facts a target alias, of many runs), a quarter of the
    readers stale; ids from 1 (TRUNCATE ... RESTART IDENTITY, rolled back with the test)."""
    from bench.changes import COLUMN_LINEAGE, KEY_TAIL, READ_TABLES
    from bench.read import BUILD as READ_BUILD

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(READ_TABLES)} RESTART IDENTITY CASCADE")
        values = {"datasets": 300, "jobs": 75, "runs": 3_000, "key_tail": KEY_TAIL.encode()}
        for statement in [*READ_BUILD[: len(READ_TABLES)], *COLUMN_LINEAGE]:
            cursor.execute(statement, values)
        cursor.execute("ANALYZE")


@pytest.mark.parametrize("probes", ["planner's choice", "probes priced out"])
def test_the_facts_and_windows_are_read_by_key(bench_store, probes) -> None:
    with connection.cursor() as cursor:
        # The readers of a few sources' columns, as a page of changes asks.
        cursor.execute(
            "SELECT id, job_id FROM catalog_column_lineage_edge WHERE source_id BETWEEN 40 AND 80"
        )
        asked = dict(cursor.fetchall())
        cursor.execute(
            "SELECT count(DISTINCT job_id) FROM catalog_column_lineage_edge "
            "WHERE source_id BETWEEN 40 AND 80"
        )
        (jobs,) = cursor.fetchone()
    statements: list[tuple[str, Any]] = []

    def caught(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(caught):
        current = currency.current_column_edges(asked)
    assert 0 < len(current) < len(asked)  # current readers and stale ones
    ((sql, params),) = statements
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        if probes == "probes priced out":
            cursor.execute("SET LOCAL enable_nestloop = off")
            cursor.execute("SET LOCAL enable_mergejoin = off")
        cursor.execute(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + sql.removeprefix(currency.NO_JIT), params
        )
        (document,) = cursor.fetchone()
    plan = document[0]["Plan"] if isinstance(document, list) else document
    facts = _nodes(plan, "catalog_column_lineage_fact")
    assert facts
    for node in facts:
        # One probe of the unique index by its full key: at most a row each, none dropped.
        assert node.get("Index Name") == "catalog_column_fact_uniq", node["Node Type"]
        for column in ("run_id", "target_alias_id", "source_alias_id", "key_hash"):
            assert f"({column} = " in node["Index Cond"]
        assert node["Actual Rows"] <= 1 and node.get("Rows Removed by Filter", 0) == 0
    assert sum(node["Actual Loops"] for node in facts) <= 4 * len(asked)
    # Each reference run's window read by its key: one run row each.
    (windows,) = _subplans(plan, "CTE windows")
    runs = _nodes(windows, "catalog_run")
    read = sum(
        (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
        for node in runs
    )
    assert read == jobs


def test_the_statement_is_not_jit_compiled(bench_store) -> None:
    """A probe per edge is costed at a few units a row: past jit_above_cost (thousands of
    edges) LLVM compiled the plan first, 3.1 s for bench/changes.py's 24,000 edges that the
    statement reads in 0.15 s (ADR 0176). The threshold at 0 here: any plan would be, and
    EXPLAIN says so without compiling."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_jit_available()")
        if not cursor.fetchone()[0]:
            pytest.skip("this PostgreSQL cannot JIT-compile")
        cursor.execute("SELECT id, job_id FROM catalog_column_lineage_edge")
        asked = dict(cursor.fetchall())
    statements: list[tuple[str, Any]] = []

    def caught(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(caught):
        currency.current_column_edges(asked)
    ((sql, params),) = statements
    head = sql[: sql.index("WITH reference")]  # what is sent before the statement
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = on")
        cursor.execute("SET LOCAL jit_above_cost = 0")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql.removeprefix(head), params)
        alone = "JIT" in cursor.fetchone()[0][0]
        cursor.execute(head + "EXPLAIN (FORMAT JSON) " + sql.removeprefix(head), params)
        while cursor.nextset():
            pass
        as_sent = "JIT" in cursor.fetchone()[0][0]
    # Booleans: pytest's account of a plan document that failed took minutes.
    assert alone, "the threshold does not compile the statement alone"
    assert not as_sent, "the statement as sent is JIT-compiled"

"""The drawn job edges meet their jobs' reference runs before the edge table (ADR 0117).

``catalog.lineage.job_edges``' statement joins the drawn keys with the reference runs
(``currency.reference_runs``, a CTE) in a subquery planned apart, and only then reads the
edge table by its unique key. Joined after the edge table, the planner estimated the drawn
edges at one row and scanned the reference runs once per edge (bench/read.py's 1M-event
store: 569 edges x 271 jobs). The answers are the same: tests/api/test_graph_prebuilt.py,
tests/api/test_graph_snapshot.py and the as-of graphs there compare bytes.
"""

import json
from datetime import timedelta

import pytest
from django.db import connection, transaction

from catalog.lineage import currency, job_edges
from catalog.models import JobLineageEdge
from catalog.services.derivation import kept_currency
from tests.api.factories import at, make_dataset, make_edge, make_job, make_run

pytestmark = pytest.mark.django_db


def _store():
    """Three jobs, each with runs; the first's latest run no longer wrote one of its
    outputs (that edge is not current), the last's latest run failed."""
    a, b, c, d, e = (make_dataset() for _ in range(5))
    first, second, third = make_job(), make_job(), make_job()
    old, new = make_run(first, started=at(1)), make_run(first, started=at(2))
    make_edge(a, b, first, first=at(1), last=at(1), runs=[old])
    make_edge(a, c, first, first=at(2), last=at(2), runs=[new])
    make_edge(b, d, second, first=at(1), last=at(2), runs=[make_run(second, started=at(1))])
    runs = [make_run(third, started=at(1)), make_run(third, "FAIL", started=at(2))]
    make_edge(d, e, third, first=at(1), last=at(2), runs=runs)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_job_edge")
        cursor.execute("ANALYZE catalog_run")
    return {(edge.direction, edge.dataset_id, edge.job_id) for edge in JobLineageEdge.objects.all()}


def _joins_of_reference(node: dict, inside: list[dict]) -> list[list[dict]]:
    """For each scan of the ``reference`` CTE, the plan nodes above it (innermost last)."""
    found = []
    if node.get("Node Type") == "CTE Scan" and node.get("CTE Name") == "reference":
        found.append(inside)
    for child in node.get("Plans", []):
        found += _joins_of_reference(child, [*inside, node])
    return found


def _relations(node: dict) -> set[str]:
    names = {node["Relation Name"]} if "Relation Name" in node else set()
    for child in node.get("Plans", []):
        names |= _relations(child)
    return names


@pytest.mark.parametrize("written_order", [False, True])
def test_the_reference_runs_are_joined_to_the_keys_not_to_the_edge_table(written_order):
    """As of T (now the kept figures are read, ADR 0138). Planned as the store's statistics
    lead, and in the statement's written order (the planner's choice on a store whose
    estimates mislead it, as the 1M-event store's did): either way the join over the
    reference runs reads no edge table."""
    keys = _store()
    reference, select, values = job_edges.drawn_sql(keys, at(3), None, retired=False)
    with transaction.atomic(), connection.cursor() as cursor:
        if written_order:
            cursor.execute("SET LOCAL join_collapse_limit = 1")
            cursor.execute("SET LOCAL from_collapse_limit = 1")
        cursor.execute("EXPLAIN (FORMAT JSON) " + reference + select, values)
        plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        cursor.execute(reference + select, values)
        rows = cursor.fetchall()
    assert len(rows) == len(keys)
    scans = _joins_of_reference(plan[0]["Plan"], [])
    assert scans, "no scan of the reference runs"
    for above in scans:
        # The nearest join over the reference runs reads no edge table: the keys' subquery.
        join = next(node for node in reversed(above) if _is_join(node))
        assert "catalog_job_edge" not in _relations(join), json.dumps(join)[:2000]


def _is_join(node: dict) -> bool:
    return node["Node Type"] in ("Nested Loop", "Hash Join", "Merge Join")


@pytest.mark.parametrize("kept", [False, True])
@pytest.mark.parametrize(
    ("as_of", "unseen"), [(None, 0), (at(1) + timedelta(minutes=30), 1), (at(3), 0)]
)
def test_each_edge_is_current_by_the_read_time_rule(as_of, unseen, kept):
    """Each drawn edge's ``current`` is currency's own test of it (the impact report's
    statement, ``currency.current_job_edges``), now and as of T; now, kept by derivation
    (ADR 0138) or not."""
    keys = _store()
    if kept:
        with connection.cursor() as cursor:
            kept_currency.keep(
                cursor, [], [], list(JobLineageEdge.objects.values_list("job_id", flat=True))
            )
    rows = job_edges.job_edges(keys, as_of, None, retired=False)
    assert len(rows) == len(keys) - unseen  # as of T, an edge first seen after T is not
    edges = {row[0]: row[1] for row in rows}
    current = currency.current_job_edges(edges, as_of)
    assert {row[0] for row in rows if row[10]} == current
    if as_of is None:  # the first job's output its latest run did not write
        assert len(current) == len(rows) - 1


def _loops(node: dict, relation: str) -> int:
    """How many times the plan scanned ``relation`` (EXPLAIN ANALYZE's loops)."""
    own = node.get("Actual Loops", 0) if node.get("Relation Name") == relation else 0
    return own + sum(_loops(child, relation) for child in node.get("Plans", []))


@pytest.mark.parametrize("kept", [False, True])
def test_now_the_kept_figures_read_no_run(kept):
    """Now, an edge whose figures derivation kept (ADR 0138) reads no reference run, no
    last run and no edge run; one not kept (the factories write none) reads them as
    before, for itself. The answers are currency's either way (the test below)."""
    keys = _store()
    if kept:
        with connection.cursor() as cursor:
            kept_currency.keep(
                cursor, [], [], list(JobLineageEdge.objects.values_list("job_id", flat=True))
            )
            cursor.execute(
                "UPDATE catalog_job_edge e SET last_run_uuid = r.run_uuid"
                " FROM catalog_run r WHERE r.id = e.last_run_id"
            )
        assert not JobLineageEdge.objects.filter(current__isnull=True).exists()
    reference, select, values = job_edges.drawn_sql(keys, None, None, retired=False)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + reference + select, values)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    runs = _loops(plan[0]["Plan"], "catalog_run") + _loops(plan[0]["Plan"], "catalog_job_edge_run")
    assert (runs == 0) is kept

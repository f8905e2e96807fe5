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
@pytest.mark.parametrize("as_of", [False, True])
def test_the_reference_runs_are_joined_to_the_keys_not_to_the_edge_table(as_of, written_order):
    """Planned as the store's statistics lead, and in the statement's written order (the
    planner's choice on a store whose estimates mislead it, as the 1M-event store's did):
    either way the join over the reference runs reads no edge table."""
    keys = _store()
    moment = at(3) if as_of else None
    reference, select, values = job_edges.drawn_sql(keys, moment, None, retired=False)
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


@pytest.mark.parametrize(
    ("as_of", "unseen"), [(None, 0), (at(1) + timedelta(minutes=30), 1), (at(3), 0)]
)
def test_each_edge_is_current_by_the_read_time_rule(as_of, unseen):
    """Each drawn edge's ``current`` is currency's own test of it (the impact report's
    statement, ``currency.current_job_edges``), now and as of T."""
    keys = _store()
    rows = job_edges.job_edges(keys, as_of, None, retired=False)
    assert len(rows) == len(keys) - unseen  # as of T, an edge first seen after T is not
    edges = {row[0]: row[1] for row in rows}
    current = currency.current_job_edges(edges, as_of)
    assert {row[0] for row in rows if row[10]} == current
    if as_of is None:  # the first job's output its latest run did not write
        assert len(current) == len(rows) - 1

"""The graph's statements are sent through ``core.prepared.read_cursor`` (ADR 0133; not
the walk, nor a job root's pairs, whose generic plans could cost more): on a kept
connection each is prepared once per shape and planned no more once PostgreSQL keeps
its generic plan, and the answer is the same byte for byte under either plan and with
``LINEAGE["PREPARE_READS"]`` off."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.api.factories import at, make_dataset, make_edge, make_job

pytestmark = pytest.mark.django_db

# An opening of each statement a graph sends; what pg_prepared_statements holds is matched
# against them.
_OPENINGS = {
    "root check": "SELECT EXISTS (SELECT 1 FROM catalog_static_lineage)",
    "walk": "WITH RECURSIVE",
    "pairs": "SELECT e.source_id, e.target_id, e.job_id, e.lineage_type",
    "job links": "SELECT je.job_id, je.dataset_id, je.direction FROM catalog_job_edge je",
    "nodes and edges": "WITH reference(job_id, run_id)",
    "depth probe": "(SELECT true, d FROM unnest(",
}


def _deallocate() -> None:
    """Nothing an earlier test prepared on this kept connection is held (psycopg forgets
    its own on seeing the command, core.prepared)."""
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")


@pytest.fixture
def store() -> dict[str, int]:
    """a → b → c → d through three jobs: from b, depth 1 cuts at a."""
    _deallocate()
    a, b, c, d = (make_dataset(name=name) for name in "abcd")
    jobs = [make_job(f"step_{n}") for n in range(3)]
    for n, (source, target) in enumerate(((a, b), (b, c), (c, d))):
        make_edge(source, target, jobs[n], first=at(n), last=at(n + 1))
    return {"b": b.id, "job": jobs[1].id}


def _prepared() -> dict[str, list[tuple[int, int]]]:
    """Each graph statement held prepared on this connection: (generic, custom) plans of
    each shape (a dataset root's and a job root's differ: the root's table, its job)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements")
        rows = cursor.fetchall()
    found: dict[str, list[tuple[int, int]]] = {}
    for text, generic, custom in rows:
        for name, opening in _OPENINGS.items():
            if text.lstrip().startswith(opening):
                found.setdefault(name, []).append((generic, custom))
    return found


def _paths(store: dict[str, int]) -> list[str]:
    return [
        f"/api/v1/lineage/graph?node=dataset:{store['b']}&depth=1",
        f"/api/v1/lineage/graph?node=job:{store['job']}&depth=1",
    ]


def test_each_statement_is_prepared_once_and_the_answer_stays(
    store: dict[str, int], read_client: Client
) -> None:
    dataset_root, job_root = _paths(store)
    bodies = {read_client.get(dataset_root).content for _ in range(7)}
    assert len(bodies) == 1
    assert b'"nodes_with_more":["dataset:' in next(iter(bodies))  # the depth probe ran
    prepared = _prepared()
    # Not the walk: its generic plan could cost more (ADR 0133).
    assert set(prepared) == set(_OPENINGS) - {"walk"}
    # One prepared statement each, run by every request (the token's statements aside).
    counts = {name: [sum(plans) for plans in shapes] for name, shapes in prepared.items()}
    assert counts == {name: [7] for name in prepared}
    with CaptureQueriesContext(connection) as queries:
        job_bodies = {read_client.get(job_root).content for _ in range(3)}
    assert len(job_bodies) == 1
    # The job root's first hop is the walk's start (ADR 0133): no statement of its own.
    sent = [query["sql"].lstrip() for query in queries.captured_queries]
    assert [sql for sql in sent if sql.startswith("WITH RECURSIVE")]
    assert not [sql for sql in sent if sql.startswith("SELECT DISTINCT je.dataset_id")]


def test_the_answer_is_the_same_by_generic_plans_and_unprepared(
    store: dict[str, int], read_client: Client, settings
) -> None:
    paths = _paths(store)
    custom = [read_client.get(path).content for path in paths]
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
    try:
        generic = [read_client.get(path).content for path in paths]
        prepared = _prepared()
        assert set(prepared) == set(_OPENINGS) - {"walk"}
        # A job root's pairs are not prepared either: one shape, the dataset root's.
        assert len(prepared["pairs"]) == 1
        # Every plan since the setting was generic: the custom ones are the first requests'.
        plans = [plan for shapes in prepared.values() for plan in shapes]
        assert all(generic_plans >= 1 for generic_plans, _ in plans), prepared
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")
    assert generic == custom
    _deallocate()
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    assert [read_client.get(path).content for path in paths] == custom
    assert _prepared() == {}

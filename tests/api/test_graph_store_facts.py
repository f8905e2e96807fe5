"""The graph reads two store-wide facts with its root (ADR 0104): whether any job declares
lineage and whether anything is retired. When neither holds it leaves out the static reads
and the retirement probes, which could only find nothing. The answers must be the same
bytes as with them, and a declaration or retirement committed after one graph must be in
the next (nothing is remembered between requests; the declaration's test is in
test_static_lineage.py)."""

import copy
import itertools

import pytest

from catalog.lineage import graph as lineage
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.api.factories import (
    at,
    iso,
    make_column_edge,
    make_dataset,
    make_edge,
    make_job,
    make_run,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _store_once(module_transaction):
    # Built once for the module, not once per test (ADR 0113); each test's retirements are
    # rolled back to it.
    with module_transaction():
        return build_store()


@pytest.fixture
def store(_store_once, db):
    """A branching lineage with runs, a column edge and no declaration or retirement: the
    module's rows, as copies of their instances (as Django's setUpTestData gives each test),
    so what one test does to an instance no other test sees."""
    return copy.deepcopy(_store_once)


def build_store():
    datasets = [make_dataset(f"shop.t{index}") for index in range(12)]
    jobs = [make_job(f"job{index}") for index in range(4)]
    for index, (source, target) in enumerate(itertools.pairwise(datasets)):
        job = jobs[index % len(jobs)]
        runs = [make_run(job, started=at(index)), make_run(job, "FAIL", started=at(index + 1))]
        make_edge(source, target, job, first=at(index), last=at(index + 1), runs=runs)
        make_edge(source, datasets[(index * 5 + 3) % len(datasets)], job, first=at(index))
    make_column_edge(datasets[2], "id", datasets[3], "order_id", jobs[2])
    return datasets, jobs


def requests(datasets, jobs):
    middle, job = datasets[5].id, jobs[1].id
    return [
        f"node=dataset:{middle}",
        f"node=dataset:{middle}&direction=both&depth=5&max_nodes=500",
        f"node=dataset:{middle}&depth=1&max_nodes=4",
        f"node=dataset:{middle}&direction=upstream&columns=true",
        f"node=dataset:{middle}&as_of={iso(at(4))}",
        f"node=dataset:{middle}&since={iso(at(6))}",
        f"node=job:{job}&depth=3",
        f"node=job:{job}&lineage=static",
    ]


def test_the_answers_are_the_bytes_the_full_reads_give(api, store, monkeypatch):
    paths = [f"/api/v1/lineage/graph?{query}" for query in requests(*store)]
    skipping = [api.get(path) for path in paths]
    read_root = lineage._root_job

    def as_if_the_store_declared_and_retired(root):
        root_job, _, _ = read_root(root)
        return root_job, True, True

    monkeypatch.setattr(lineage, "_root_job", as_if_the_store_declared_and_retired)
    full = [api.get(path) for path in paths]
    for path, fast, slow in zip(paths, skipping, full, strict=True):
        assert fast.status_code == slow.status_code == 200, path
        assert fast.content == slow.content, path


def test_fewer_statements_without_declarations_or_retirements(
    api, store, django_assert_num_queries
):
    node = f"dataset:{store[0][5].id}"
    with django_assert_num_queries(6):
        api.get(f"/api/v1/lineage/graph?node={node}&depth=3")
    # Something retired elsewhere: the same statements, each with its probes again.
    retirement.retire(make_job("elsewhere"), Actor("token:ci"), "switched off")
    with django_assert_num_queries(6):
        api.get(f"/api/v1/lineage/graph?node={node}&depth=3")


def test_a_retirement_after_a_graph_is_in_the_next(api, store):
    datasets, jobs = store
    node = f"/api/v1/lineage/graph?node=dataset:{datasets[5].id}&depth=5"
    before = api.get(node).json()
    assert f"job:{jobs[0].id}" in {n["id"] for n in before["nodes"]}
    retirement.retire(jobs[0], Actor("token:ci"), "switched off")
    after = api.get(node).json()
    assert f"job:{jobs[0].id}" not in {n["id"] for n in after["nodes"]}
    retirement.restore(jobs[0], Actor("token:ci"))
    assert api.get(node).content == api.get(node).content
    assert api.get(node).json() == before

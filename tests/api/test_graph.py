"""Lineage graph semantics on hand-built graphs: cycles, diamonds, bounds, as_of, merges."""

import itertools

import pytest

from catalog.models import DatasetAlias
from tests.api.factories import (
    add_alias,
    at,
    iso,
    make_column_edge,
    make_dataset,
    make_edge,
    make_job,
    make_job_edge,
    make_run,
)
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db


def graph(api, node, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    response = api.get(f"/api/v1/lineage/graph?node={node}&{query}")
    assert response.status_code == 200, response.content
    return response.json()


def ids(body, kind="dataset"):
    return {n[f"{kind}_id"] for n in body["nodes"] if n["type"] == kind}


def chain(length, job=None):
    datasets = [make_dataset(f"chain.t{index}") for index in range(length)]
    job = job or make_job("chain.job")
    for source, target in itertools.pairwise(datasets):
        make_edge(source, target, job)
    return datasets, job


def test_bipartite_edges_with_history(api):
    a, b = make_dataset("a"), make_dataset("b")
    job = make_job("copy")
    runs = [make_run(job, started=at(1)), make_run(job, started=at(5))]
    make_edge(a, b, job, first=at(1), last=at(5), runs=runs)
    body = graph(api, f"dataset:{a.id}", direction="downstream")
    assert {(e["kind"], e["source"], e["target"]) for e in body["edges"]} == {
        ("input", f"dataset:{a.id}", f"job:{job.id}"),
        ("output", f"job:{job.id}", f"dataset:{b.id}"),
    }
    edge = body["edges"][0]
    assert edge["first_seen"] == "2026-11-01T01:00:00Z"
    assert edge["last_seen"] == "2026-11-01T05:00:00Z"
    assert edge["last_run_id"] == str(runs[1].run_uuid)
    assert edge["run_count"] == 2
    assert body["truncated"] is False and body["cut"] == {}
    job_node = next(n for n in body["nodes"] if n["type"] == "job")
    assert job_node["name"] == "copy" and job_node["depth"] == 1


def test_directions(api):
    (a, b, c), _ = chain(3)
    assert ids(graph(api, f"dataset:{b.id}", direction="upstream")) == {a.id, b.id}
    assert ids(graph(api, f"dataset:{b.id}", direction="downstream")) == {b.id, c.id}
    assert ids(graph(api, f"dataset:{b.id}")) == {a.id, b.id, c.id}


def test_cycle_terminates_and_is_complete(api):
    a, b, c = (make_dataset(name) for name in "abc")
    job = make_job("loop")
    make_edge(a, b, job)
    make_edge(b, c, job)
    make_edge(c, a, job)
    body = graph(api, f"dataset:{a.id}", direction="downstream", depth=10)
    assert ids(body) == {a.id, b.id, c.id}
    assert body["truncated"] is False
    assert len(body["edges"]) == 6


def test_diamond_keeps_shortest_depth(api):
    top, left, right, bottom = (make_dataset(name) for name in ("top", "l", "r", "bottom"))
    job = make_job("fan")
    for source, target in ((top, left), (top, right), (left, bottom), (right, bottom)):
        make_edge(source, target, job)
    body = graph(api, f"dataset:{top.id}", direction="downstream")
    depths = {n["dataset_id"]: n["depth"] for n in body["nodes"] if n["type"] == "dataset"}
    assert depths == {top.id: 0, left.id: 1, right.id: 1, bottom.id: 2}


def test_depth_bound_says_what_was_cut(api):
    datasets, _ = chain(6)
    body = graph(api, f"dataset:{datasets[0].id}", direction="downstream", depth=2)
    assert ids(body) == {d.id for d in datasets[:3]}
    assert body["truncated"] is True
    assert body["cut"]["depth"] == {"limit": 2, "nodes_with_more": [f"dataset:{datasets[2].id}"]}
    exact = graph(api, f"dataset:{datasets[0].id}", direction="downstream", depth=5)
    assert exact["truncated"] is False


def test_max_nodes_bound_keeps_nearest_and_counts_jobs(api):
    datasets, _ = chain(8)
    body = graph(api, f"dataset:{datasets[0].id}", direction="downstream", depth=10, max_nodes=4)
    assert len(body["nodes"]) <= 4
    assert ids(body) == {datasets[0].id, datasets[1].id, datasets[2].id}
    assert len(ids(body, "job")) == 1
    assert body["truncated"] is True
    assert body["cut"]["max_nodes"]["omitted_datasets"] == 5


def test_wide_fan_out_is_bounded(api):
    hub = make_dataset("hub")
    job = make_job("spray")
    for index in range(30):
        make_edge(hub, make_dataset(f"leaf{index}"), job)
    body = graph(api, f"dataset:{hub.id}", direction="downstream", max_nodes=10)
    assert len(body["nodes"]) == 10
    assert body["truncated"] is True


def test_as_of_and_since(api):
    a, b, c = (make_dataset(name) for name in "abc")
    job = make_job("grow")
    make_edge(a, b, job, first=at(1), last=at(1))
    make_edge(b, c, job, first=at(10), last=at(10))
    assert ids(graph(api, f"dataset:{a.id}", as_of=iso(at(5)))) == {a.id, b.id}
    assert ids(graph(api, f"dataset:{a.id}", as_of=iso(at(11)))) == {a.id, b.id, c.id}
    # since: only edges seen since then (a → b is older: a alone is left)
    assert ids(graph(api, f"dataset:{b.id}", since=iso(at(5)))) == {b.id, c.id}


def test_as_of_reports_history_up_to_that_time(api):
    a, b = make_dataset("a"), make_dataset("b")
    job = make_job("daily")
    runs = [make_run(job, started=at(hours)) for hours in (1, 24, 48)]
    make_edge(a, b, job, first=at(1), last=at(48), runs=runs)
    edge = graph(api, f"dataset:{a.id}", as_of=iso(at(30)))["edges"][0]
    assert edge["run_count"] == 2
    assert edge["last_seen"] == "2026-11-02T00:00:00Z"
    assert edge["last_run_id"] == str(runs[1].run_uuid)


def test_alias_merged_dataset_is_one_node_with_every_name(api):
    table = make_dataset("warehouse.orders", namespace="hive://meta:9083")
    add_alias(table, "s3://lake", "warehouse/orders", reason="symlink")
    upstream = make_dataset("raw.orders")
    make_edge(upstream, table, make_job("load"))
    body = graph(api, f"dataset:{upstream.id}")
    node = next(n for n in body["nodes"] if n.get("dataset_id") == table.id)
    assert {(a["namespace"], a["name"]) for a in node["aliases"]} == {
        ("hive://meta:9083", "warehouse.orders"),
        ("s3://lake", "warehouse/orders"),
    }
    assert DatasetAlias.objects.filter(dataset=table).count() == 2


def test_columns_on_request(api):
    a, b = make_dataset("a"), make_dataset("b")
    job = make_job("cols")
    make_edge(a, b, job)
    make_column_edge(a, "id", b, "order_id", job)
    assert "column_edges" not in graph(api, f"dataset:{a.id}")
    body = graph(api, f"dataset:{a.id}", columns="true")
    assert body["column_edges"][0]["source_field"] == "id"
    assert body["column_edges"][0]["target_field"] == "order_id"
    assert body["column_edges"][0]["job"] == f"job:{job.id}"


def test_job_root(api):
    a, b, c = (make_dataset(name) for name in "abc")
    job, next_job = make_job("first"), make_job("second")
    make_edge(a, b, job)
    make_edge(b, c, next_job)
    body = graph(api, f"job:{job.id}", direction="downstream")
    assert ids(body) == {b.id, c.id}
    assert ids(body, "job") == {job.id, next_job.id}
    both = graph(api, f"job:{job.id}")
    assert ids(both) == {a.id, b.id, c.id}


def test_graph_queries_are_bounded(api, django_assert_num_queries):
    datasets, _ = chain(40)
    # 1 root exists (and whether anything is declared or retired; ADR 0104), 2 the walk
    # (both directions, one statement; ADR 0099), 3 edges among the nodes, 4 which jobs link
    # the nodes, 5 the drawn job edges and which of them the jobs' latest completed runs
    # still produce (ADR 0060, in one statement since ADR 0104), with the datasets, aliases
    # and jobs, written as the answer's JSON by PostgreSQL (one statement since ADR 0109),
    # 6 "more beyond the depth bound" (both directions); the walk and the depth-bound
    # checks take static lineage in the same statement
    with django_assert_num_queries(6):
        graph(api, f"dataset:{datasets[20].id}", depth=3, lineage="observed")
    # With static lineage (the default) on a store that declares nothing, which the root's
    # check reads in its statement: the same 6 (ADR 0104, 0109)
    with django_assert_num_queries(6):
        graph(api, f"dataset:{datasets[20].id}", depth=3)
    # Once any job declares lineage: + declared pairs among the nodes, + jobs declaring the
    # nodes, + the drawn edges' declarations, and the job edges and nodes apart again (the
    # Python assembly draws declarations, ADR 0109)
    derive(fixture("job_event_orders_v1"))
    with django_assert_num_queries(10):
        graph(api, f"dataset:{datasets[20].id}", depth=3)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "node=table:1",
        "node=dataset:x",
        "node=dataset:1&depth=0",
        "node=dataset:1&depth=11",
        "node=dataset:1&max_nodes=5000",
        "node=dataset:1&direction=sideways",
        "node=dataset:1&as_of=yesterday",
        "node=dataset:1&columns=maybe",
    ],
)
def test_bad_graph_parameters_are_400(api, query):
    response = api.get(f"/api/v1/lineage/graph?{query}")
    assert response.status_code == 400
    assert response.json()["type"] == "urn:lineage-catalog:problem:invalid-request"


def test_unknown_root_is_404(api):
    assert api.get("/api/v1/lineage/graph?node=dataset:99999").status_code == 404
    assert api.get("/api/v1/lineage/graph?node=job:99999").status_code == 404


def test_diff_added_and_removed(api):
    a, b, c = (make_dataset(name) for name in "abc")
    job = make_job("changing")
    old_run, new_run = make_run(job, started=at(1)), make_run(job, started=at(10))
    make_edge(a, b, job, first=at(1), last=at(1), runs=[old_run])  # not written any more
    make_edge(a, c, job, first=at(10), last=at(10), runs=[new_run])  # new output
    response = api.get(
        f"/api/v1/lineage/diff?node=dataset:{a.id}&from={iso(at(5))}&to={iso(at(20))}"
    )
    body = response.json()
    assert [e["target"] for e in body["edges"]["added"]] == [f"dataset:{c.id}"]
    assert [e["target"] for e in body["edges"]["removed"]] == [f"dataset:{b.id}"]
    assert [n["id"] for n in body["nodes"]["added"]] == [f"dataset:{c.id}"]
    assert [n["id"] for n in body["nodes"]["removed"]] == [f"dataset:{b.id}"]
    assert body["from"] == "2026-11-01T05:00:00Z"


def test_diff_requires_ordered_times(api):
    a = make_dataset("a")
    base = f"/api/v1/lineage/diff?node=dataset:{a.id}"
    assert api.get(base + f"&from={iso(at(5))}").status_code == 400
    assert api.get(base + f"&from={iso(at(5))}&to={iso(at(1))}").status_code == 400


def test_jobs_that_only_read_or_only_write_are_drawn(api):
    (a, b), job = chain(2)
    check, export, loader = make_job("dbt.test"), make_job("export"), make_job("loader")
    runs = [make_run(check, started=at(2)), make_run(check, started=at(3))]
    make_job_edge(check, b, "input", first=at(2), last=at(3), runs=runs)
    make_job_edge(export, b, "input", first=at(4))
    make_job_edge(loader, a, "output", first=at(1))
    body = graph(api, f"dataset:{b.id}")
    assert ids(body, "job") == {job.id, check.id, export.id, loader.id}
    edges = {(e["kind"], e["source"], e["target"]): e for e in body["edges"]}
    check_edge = edges[("input", f"dataset:{b.id}", f"job:{check.id}")]
    assert check_edge["run_count"] == 2
    assert check_edge["last_run_id"] == str(runs[1].run_uuid)
    assert check_edge["first_seen"] == "2026-11-01T02:00:00Z"
    assert ("output", f"job:{loader.id}", f"dataset:{a.id}") in edges
    depths = {n["id"]: n["depth"] for n in body["nodes"]}
    assert depths[f"job:{check.id}"] == 1 and depths[f"job:{loader.id}"] == 2
    # Only in the walk's direction: the readers of b are not upstream of b.
    upstream = graph(api, f"dataset:{b.id}", direction="upstream")
    assert ids(upstream, "job") == {job.id, loader.id}
    # Under as_of, since and columns=true too.
    assert check.id not in ids(graph(api, f"dataset:{b.id}", as_of=iso(at(1))), "job")
    assert ids(graph(api, f"dataset:{b.id}", since=iso(at(3))), "job") == {check.id, export.id}
    assert check.id in ids(graph(api, f"dataset:{b.id}", columns="true"), "job")
    as_of = graph(api, f"dataset:{b.id}", as_of=iso(at(2)))
    edge = next(e for e in as_of["edges"] if e["target"] == f"job:{check.id}")
    assert (edge["run_count"], edge["last_run_id"]) == (1, str(runs[0].run_uuid))


def test_a_check_job_as_root_and_at_the_bounds(api):
    (a, b, c), job = chain(3)
    check = make_job("quality.check")
    make_job_edge(check, c, "input")
    # A job that only reads has an upstream and no downstream.
    body = graph(api, f"job:{check.id}")
    assert ids(body) == {a.id, b.id, c.id}
    assert ids(body, "job") == {check.id, job.id}
    assert ("input", f"dataset:{c.id}", f"job:{check.id}") in {
        (e["kind"], e["source"], e["target"]) for e in body["edges"]
    }
    assert ids(graph(api, f"job:{check.id}", direction="downstream")) == set()
    # At the depth bound the check is not drawn, and the cut says so.
    bound = graph(api, f"dataset:{a.id}", direction="downstream", depth=2)
    assert check.id not in ids(bound, "job")
    assert bound["cut"]["depth"]["nodes_with_more"] == [f"dataset:{c.id}"]
    assert check.id in ids(graph(api, f"dataset:{a.id}", direction="downstream", depth=3), "job")
    # Jobs count against max_nodes like datasets.
    tight = graph(api, f"dataset:{a.id}", direction="downstream", max_nodes=2)
    assert len(tight["nodes"]) <= 2 and tight["truncated"]


def test_diff_tells_a_new_reader(api):
    a = make_dataset("a")
    check = make_job("late.check")
    make_job_edge(check, a, "input", first=at(10))
    body = api.get(
        f"/api/v1/lineage/diff?node=dataset:{a.id}&from={iso(at(5))}&to={iso(at(20))}"
    ).json()
    assert [e["target"] for e in body["edges"]["added"]] == [f"job:{check.id}"]
    assert [n["id"] for n in body["nodes"]["added"]] == [f"job:{check.id}"]


def test_many_readers_never_crowd_out_the_lineage(api):
    (a, b, c), _ = chain(3)
    for index in range(30):
        make_job_edge(make_job(f"dbt.test_{index}"), a, "input")
    body = graph(api, f"dataset:{a.id}", direction="downstream", max_nodes=10)
    assert ids(body) == {a.id, b.id, c.id}
    assert len(body["nodes"]) == 10
    assert body["cut"]["max_nodes"]["omitted_jobs"] == 30 - (10 - 4)  # 3 datasets, 1 job
    assert body["cut"]["max_nodes"]["omitted_datasets"] == 0

"""Namespaces, jobs, runs, datasets and lookup: filters, ordering, cursors, errors, queries."""

from datetime import timedelta

import pytest

from api.views import catalog as catalog_views
from catalog.models import AliasRule, RunDataset
from tests.api.conftest import follow_all, results
from tests.api.factories import (
    T0,
    add_alias,
    add_fields,
    at,
    iso,
    make_dataset,
    make_edge,
    make_job,
    make_run,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def shop():
    """orders → (etl.load) → orders_clean → (etl.report) → report; one alias merged."""
    orders = make_dataset("shop.public.orders", description="Every order placed")
    clean = make_dataset("warehouse.orders_clean", namespace="s3://lake")
    report = make_dataset("bi.report", namespace="trino://bi:8443")
    add_alias(orders, "hive://meta:9083", "raw.orders", reason="symlink", detail="symlinks")
    add_fields(orders, "order_id", "customer_id", "amount")
    load = make_job("etl.load", integration="SPARK", job_type="JOB")
    report_job = make_job("etl.report", namespace="dagster")
    child = make_job("etl.load.step", parent=load)
    make_edge(orders, clean, load, first=at(0), last=at(10))
    make_edge(clean, report, report_job, first=at(1), last=at(2))
    return {
        "orders": orders,
        "clean": clean,
        "report": report,
        "load": load,
        "report_job": report_job,
        "child": child,
    }


def test_namespaces_count_jobs_and_datasets(api, shop):
    rows = results(api.get("/api/v1/namespaces"))
    by_name = {row["namespace"]: row for row in rows}
    assert by_name["airflow"] == {"namespace": "airflow", "jobs": 2, "datasets": 0}
    assert by_name["postgres://db:5432"]["datasets"] == 1
    assert [row["namespace"] for row in rows] == sorted(by_name)


def test_namespaces_queries(api, shop, django_assert_num_queries):
    # the per-namespace summary's rows (ADR 0121; two GROUP BYs of the whole tables before)
    with django_assert_num_queries(1):
        api.get("/api/v1/namespaces")


def test_jobs_list_filters(api, shop):
    assert [j["name"] for j in results(api.get("/api/v1/jobs?namespace=dagster"))] == ["etl.report"]
    names = [j["name"] for j in results(api.get("/api/v1/jobs?name_prefix=etl.load"))]
    assert names == ["etl.load", "etl.load.step"]
    assert [j["name"] for j in results(api.get("/api/v1/jobs?name=etl.load"))] == ["etl.load"]
    children = results(api.get(f"/api/v1/jobs?parent_id={shop['load'].id}"))
    assert [j["id"] for j in children] == [shop["child"].id]
    by_parent_name = results(api.get("/api/v1/jobs?parent_name=etl.load"))
    assert [j["id"] for j in by_parent_name] == [shop["child"].id]
    assert results(api.get("/api/v1/jobs?integration=SPARK"))[0]["name"] == "etl.load"


def test_jobs_filter_by_latest_run_state(api, shop):
    make_run(shop["report_job"], state="FAIL", started=at(50))
    failed = results(api.get("/api/v1/jobs?state=FAIL"))
    assert [j["id"] for j in failed] == [shop["report_job"].id]
    assert failed[0]["latest_run"]["state"] == "FAIL"
    assert {j["id"] for j in results(api.get("/api/v1/jobs?state=COMPLETE"))} == {shop["load"].id}


def test_jobs_seen_window(api, shop):
    shop["report_job"].last_seen = at(100)
    shop["report_job"].save()
    seen = results(api.get(f"/api/v1/jobs?seen_since={iso(at(50))}"))
    assert [j["id"] for j in seen] == [shop["report_job"].id]


def test_jobs_cursor_pagination_is_deterministic(api):
    created = [make_job(f"job.{index:02}").id for index in range(7)]
    first = api.get("/api/v1/jobs?limit=3").json()
    assert [j["id"] for j in first["results"]] == created[:3]
    assert first["previous"] is None
    items = follow_all(api, "/api/v1/jobs?limit=3")
    assert [j["id"] for j in items] == created


def test_jobs_list_queries(api, shop, django_assert_num_queries):
    # 1 jobs page with latest-run subqueries (uuid, state, started_at) in the same SELECT
    with django_assert_num_queries(1):
        assert len(results(api.get("/api/v1/jobs"))) == 3


def test_job_detail(api, shop):
    body = api.get(f"/api/v1/jobs/{shop['load'].id}").json()
    assert body["name"] == "etl.load"
    assert body["children"] == [
        {"id": shop["child"].id, "namespace": "airflow", "name": "etl.load.step"}
    ]
    assert [link["dataset"]["id"] for link in body["inputs"]] == [shop["orders"].id]
    assert [link["dataset"]["id"] for link in body["outputs"]] == [shop["clean"].id]
    assert body["latest_run"]["state"] == "COMPLETE"
    child = api.get(f"/api/v1/jobs/{shop['child'].id}").json()
    assert child["parent"]["id"] == shop["load"].id


def test_job_detail_queries(api, shop, django_assert_num_queries):
    # 1 job + parent + latest run, 2 children, 3 inputs, 4 outputs, 5 their job edges' run
    # and completed-run counts (ADR 0069), 6 the latest test results (the newest of its
    # latest 50 runs that sent a test facet, ADR 0092)
    with django_assert_num_queries(6):
        api.get(f"/api/v1/jobs/{shop['load'].id}")


@pytest.mark.parametrize("job_id", ["999999", "abc", "0", "-1", "99999999999999999999"])
def test_unknown_job_is_404_problem(api, job_id):
    response = api.get(f"/api/v1/jobs/{job_id}")
    assert response.status_code == 404
    assert response.json()["type"] == "urn:lineage-catalog:problem:not-found"


@pytest.mark.parametrize("query", ["name=other", "state=SLEEPING"])
def test_a_detail_is_found_by_its_id_whatever_the_list_filters_say(api, shop, query):
    """The list's filters narrow lists; a detail is its id (and skips building them)."""
    response = api.get(f"/api/v1/jobs/{shop['load'].id}?{query}")
    assert response.status_code == 200
    assert response.json()["name"] == "etl.load"


def test_invalid_filter_is_400_problem(api):
    response = api.get("/api/v1/jobs?state=SLEEPING")
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "urn:lineage-catalog:problem:invalid-request"
    assert body["errors"][0]["path"] == "/state"


@pytest.mark.parametrize("query", ["limit=0", "limit=501", "limit=x", "cursor=garbage"])
def test_bad_page_parameters_are_400(api, query):
    response = api.get(f"/api/v1/jobs?{query}")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"


LISTS = [
    "/api/v1/jobs",
    "/api/v1/runs",
    "/api/v1/datasets",
    "/api/v1/events",
    "/api/v1/metadata",
    "/api/v1/changes",
    "/api/v1/namespaces",
    "/api/v1/search?q=orders",
]


@pytest.mark.parametrize("url", LISTS)
def test_every_list_takes_limits_of_1_to_500_only(api, shop, url):
    """docs/api.md: ``limit`` is 1-500 on every list (each list's own paginator: the run
    list's prepared page, the changes' and metadata's time order, the offset lists)."""
    join = "&" if "?" in url else "?"
    for limit in ("0", "-1", "501", str(10**30), "x", "1.5"):
        response = api.get(f"{url}{join}limit={limit}")
        assert response.status_code == 400, (url, limit, response.content)
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["errors"][0]["path"] == "/limit"
    for limit in ("1", "500"):
        assert api.get(f"{url}{join}limit={limit}").status_code == 200, (url, limit)


def test_a_jobs_runs_take_limits_of_1_to_500_only(api, shop):
    runs = f"/api/v1/jobs/{shop['load'].id}/runs"
    for limit in ("0", "501"):
        assert api.get(f"{runs}?limit={limit}").status_code == 400
    assert api.get(f"{runs}?limit=500").status_code == 200


def test_job_runs_and_runs_filters(api, shop):
    job = shop["load"]
    newer = make_run(job, state="FAIL", started=at(20), error_message="boom")
    runs = results(api.get(f"/api/v1/jobs/{job.id}/runs"))
    assert runs[0]["run_id"] == str(newer.run_uuid)
    assert len(runs) == 2
    assert [r["state"] for r in results(api.get(f"/api/v1/jobs/{job.id}/runs?state=FAIL"))] == [
        "FAIL"
    ]
    assert api.get("/api/v1/jobs/424242/runs").status_code == 404
    everything = results(api.get("/api/v1/runs?state=FAIL&state=COMPLETE"))
    assert len(everything) == 3
    by_job = results(api.get("/api/v1/runs?job_namespace=airflow&job_name=etl.load"))
    assert len(by_job) == 2
    since = results(api.get(f"/api/v1/runs?started_since={iso(at(15))}"))
    assert [r["run_id"] for r in since] == [str(newer.run_uuid)]


def test_runs_list_queries(api, shop, django_assert_num_queries):
    # 1 runs page joined to their job, parent runId as a subquery
    with django_assert_num_queries(1):
        assert len(results(api.get("/api/v1/runs"))) == 2


def test_job_runs_queries(api, shop, django_assert_num_queries):
    # 1 job exists, 2 runs page
    with django_assert_num_queries(2):
        api.get(f"/api/v1/jobs/{shop['load'].id}/runs")


def test_run_detail(api, shop):
    from tests.api.factories import make_event

    run = shop["load"].runs.get()
    child = make_run(shop["child"], parent_run=run, started=at(1))
    make_event(run_id=run.run_id_text, event_type="START", event_time=T0)
    body = api.get(f"/api/v1/runs/{run.run_uuid}").json()
    assert body["job"]["name"] == "etl.load"
    assert [i["dataset"]["id"] for i in body["inputs"]] == [shop["orders"].id]
    assert [o["dataset"]["id"] for o in body["outputs"]] == [shop["clean"].id]
    assert [e["event_type"] for e in body["events"]] == ["START"]
    assert body["child_run_ids"] == [str(child.run_uuid)]
    assert api.get(f"/api/v1/runs/{child.run_uuid}").json()["parent_run_id"] == str(run.run_uuid)


def test_a_run_with_many_inputs_still_shows_its_outputs(api, shop, monkeypatch):
    # RELATED_LIMIT made small: the rows a real limit needs are not worth their CPU here.
    monkeypatch.setattr(catalog_views, "RELATED_LIMIT", 2)
    run = shop["load"].runs.get()
    for number in range(4):
        alias = make_dataset(f"shop.public.extra_{number}").aliases.get()
        RunDataset.objects.create(
            run=run, alias=alias, direction="input", first_seen=T0, last_seen=T0
        )
    body = api.get(f"/api/v1/runs/{run.run_uuid}").json()
    assert [o["dataset"]["id"] for o in body["outputs"]] == [shop["clean"].id]
    assert [i["dataset"]["id"] for i in body["inputs"]][:1] == [shop["orders"].id]
    assert len(body["inputs"]) == 2


def test_run_detail_queries(api, shop, django_assert_num_queries):
    run = shop["load"].runs.get()
    # 1 run + job + parent uuid, 2 run datasets + aliases + datasets + their run facts (ADR
    # 0061, 0168), 3 events, 4 child runs, 5 other jobs' runs with the same runId (ADR 0028)
    with django_assert_num_queries(5):
        api.get(f"/api/v1/runs/{run.run_uuid}")


@pytest.mark.parametrize("run_id", ["not-a-uuid", "8f0b4c1e-0000-4000-8000-000000000000"])
def test_unknown_run_is_404(api, run_id):
    assert api.get(f"/api/v1/runs/{run_id}").status_code == 404


def test_datasets_list_has_every_alias(api, shop):
    rows = results(api.get("/api/v1/datasets"))
    assert [row["id"] for row in rows] == sorted(row["id"] for row in rows)
    orders = rows[0]
    assert {(a["namespace"], a["name"], a["reason"]) for a in orders["aliases"]} == {
        ("postgres://db:5432", "shop.public.orders", "event"),
        ("hive://meta:9083", "raw.orders", "symlink"),
    }


def test_datasets_filters(api, shop):
    def ids(query):
        return [row["id"] for row in results(api.get(f"/api/v1/datasets?{query}"))]

    assert ids("namespace=s3://lake") == [shop["clean"].id]
    assert ids("name_prefix=shop.") == [shop["orders"].id]
    assert ids("alias_namespace=hive://meta:9083&alias_name=raw.orders") == [shop["orders"].id]
    # Input is normalised like derivation does: default port added, scheme lower-cased.
    assert ids("alias_namespace=HIVE://meta&alias_name=raw.orders") == [shop["orders"].id]
    assert ids("alias_reason=symlink") == [shop["orders"].id]
    assert ids(f"producer_job_id={shop['load'].id}") == [shop["clean"].id]
    assert ids(f"consumer_job_id={shop['load'].id}") == [shop["orders"].id]
    assert ids(f"job_id={shop['load'].id}") == [shop["orders"].id, shop["clean"].id]
    assert api.get("/api/v1/datasets?alias_name=raw.orders").status_code == 400


def test_datasets_list_queries(api, shop, django_assert_num_queries):
    # 1 datasets page, 2 their aliases (one prefetch)
    with django_assert_num_queries(2):
        assert len(results(api.get("/api/v1/datasets"))) == 3


def test_dataset_detail(api, shop):
    body = api.get(f"/api/v1/datasets/{shop['clean'].id}").json()
    assert [j["job"]["name"] for j in body["producing_jobs"]] == ["etl.load"]
    assert [j["job"]["name"] for j in body["consuming_jobs"]] == ["etl.report"]
    orders = api.get(f"/api/v1/datasets/{shop['orders'].id}").json()
    assert [f["name"] for f in orders["fields"]] == ["order_id", "customer_id", "amount"]
    symlink = next(a for a in orders["aliases"] if a["reason"] == "symlink")
    assert symlink["reason_detail"] == "symlinks"
    assert orders["first_seen"] == "2026-11-01T00:00:00Z"


def test_dataset_detail_queries(api, shop, django_assert_num_queries):
    # 1 dataset, 2 its aliases with their rules, its fields, the producing and consuming
    # jobs with their run and completed-run counts (ADR 0069) and the latest runs' facts
    # with their runs and jobs (ADR 0061; one statement, ADR 0124), 3 column lineage into
    # it, the column edges jobs' current JobEvents declare into it and the count of those
    # outside its schema (one statement, ADR 0135; one more for which edges are current,
    # when it has some); observed lineage alone is the same three
    with django_assert_num_queries(3):
        api.get(f"/api/v1/datasets/{shop['orders'].id}")
    with django_assert_num_queries(3):
        api.get(f"/api/v1/datasets/{shop['orders'].id}?lineage=observed")


def test_lookup_resolves_any_alias_normalised(api, shop):
    found = api.get("/api/v1/datasets/lookup?namespace=hive://META:9083/&name=raw.orders")
    assert found.status_code == 200
    assert found.json()["id"] == shop["orders"].id
    by_display = api.get(
        "/api/v1/datasets/lookup?namespace=s3a://lake/&name=/warehouse.orders_clean"
    )
    assert by_display.json()["id"] == shop["clean"].id


def test_lookup_applies_rewrite_rules(api, shop):
    AliasRule.objects.create(
        slug="old-warehouse",
        action="rewrite",
        namespace="s3://old-lake",
        name_pattern="(.*)",
        target_namespace="s3://lake",
        target_name="\\1",
    )
    response = api.get(
        "/api/v1/datasets/lookup?namespace=s3://old-lake&name=warehouse.orders_clean"
    )
    assert response.json()["id"] == shop["clean"].id


def test_lookup_unknown_is_404_and_missing_parameter_is_400(api, shop):
    response = api.get("/api/v1/datasets/lookup?namespace=s3://lake&name=nothing")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    missing = api.get("/api/v1/datasets/lookup?namespace=s3://lake")
    assert missing.status_code == 400
    assert missing.json()["errors"][0]["path"] == "/name"


def test_lookup_queries(api, shop, django_assert_num_queries):
    # 1 alias rules (rewrite), 2 dataset by alias key, 3 aliases, fields, the jobs with
    # their run counts and run facts (one statement, ADR 0124), 4 column lineage into it,
    # the declared (static) column edges into it and those outside the schema (one
    # statement, ADR 0135)
    with django_assert_num_queries(4):
        api.get("/api/v1/datasets/lookup?namespace=s3://lake&name=warehouse.orders_clean")


def test_deep_cursor_pages_keep_order(api):
    datasets = [make_dataset(f"t.{index:03}").id for index in range(25)]
    items = follow_all(api, "/api/v1/datasets?limit=4")
    assert [row["id"] for row in items] == datasets
    # the `previous` link goes back exactly one page
    first = api.get("/api/v1/datasets?limit=4").json()
    second = api.get(first["next"]).json()
    back = api.get(second["previous"]).json()
    assert [r["id"] for r in back["results"]] == [r["id"] for r in first["results"]]


def test_timestamps_window_uses_last_seen(api, shop):
    shop["report"].last_seen = T0 + timedelta(days=3)
    shop["report"].save()
    rows = results(api.get(f"/api/v1/datasets?seen_since={iso(T0 + timedelta(days=2))}"))
    assert [row["id"] for row in rows] == [shop["report"].id]

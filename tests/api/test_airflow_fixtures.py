"""The events Apache Airflow 2.10.5 and its OpenLineage provider 2.8.0 really sent for the
harness's two DAGs (tests/fixtures/openlineage/airflow-2.10.5, captured by
tests/producers/test_airflow.py), ingested and derived through the real paths in every
``make test``: what the slow harness checks against a live Airflow, without Airflow.

What issue 31 called wrong (the failed task listed among report's writers, the DAG's job
with no lineage of its own, the ``amount_sum`` column edge into a column report lacks) is
pinned by its own tests (tests/api/test_attempted_writes.py, test_dag_lineage.py); here,
the last of it: ``create_raw``'s START lists the three tables its ``DROP TABLE IF EXISTS
report, clean, raw`` names, its COMPLETE only ``raw``, and only ``raw`` is its write.
"""

from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest

from catalog.services.derive import derive_events
from tests.api.conftest import results
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

AIRFLOW = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage" / "airflow-2.10.5"
NAMESPACE = "airflow_harness"
TABLES = "test_lc_hairflow_airflow_scratch.public."  # the harness's scratch database
SHOP = ("create_raw", "build_clean", "build_report", "fail_report")
FIVE = ("load_visits", "by_day", "by_page", "summary", "announce")


def sent(dag: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (AIRFLOW / f"{dag}.jsonl").read_bytes().splitlines()]


def derive_both_dags() -> None:
    """Both DAGs' events, each in its own batch in the order the provider sent them."""
    for dag in ("lc_shop_sql", "lc_five_tasks"):
        for event in sent(dag):
            derive_events(store([openlineage(event)]))


@pytest.fixture(scope="module")
def _derived_once(module_transaction: Any) -> None:
    # Derived once for the module (27 events, each its own batch), not once per test: the
    # tests only read (ADR 0113).
    with module_transaction():
        derive_both_dags()


@pytest.fixture
def derived(_derived_once: None, db: None) -> None:
    """Both DAGs derived; the test's writes are rolled back to them."""


def _jobs(api: Any) -> dict[str, dict[str, Any]]:
    listed = results(api.get("/api/v1/jobs", {"namespace": NAMESPACE, "limit": 100}))
    return {job["name"]: job for job in listed}


def _dataset(api: Any, table: str) -> dict[str, Any]:
    (dataset,) = results(api.get("/api/v1/datasets", {"name": TABLES + table}))
    return dataset


def test_the_fixtures_are_what_the_provider_sends() -> None:
    """A START and an end per task and one end event per DAG run (``airflow dags test``
    sends no DAG START), all from the 2.8.0 provider."""
    for dag, tasks in (("lc_shop_sql", SHOP), ("lc_five_tasks", FIVE)):
        events = sent(dag)
        assert len(events) == 2 * len(tasks) + 1
        assert {event["producer"] for event in events} == {
            "https://github.com/apache/airflow/tree/providers-openlineage/2.8.0"
        }
        assert [e["eventType"] for e in events if e["job"]["name"] == dag] == [
            "FAIL" if dag == "lc_shop_sql" else "COMPLETE"
        ]


def test_one_job_per_task_under_its_dag(api: Any, derived: None) -> None:
    jobs = _jobs(api)
    expected = {f"lc_shop_sql.{t}" for t in SHOP} | {f"lc_five_tasks.{t}" for t in FIVE}
    assert set(jobs) == expected | {"lc_shop_sql", "lc_five_tasks"}
    for dag, tasks in (("lc_shop_sql", SHOP), ("lc_five_tasks", FIVE)):
        detail = api.get(f"/api/v1/jobs/{jobs[dag]['id']}").json()
        assert sorted(child["name"] for child in detail["children"]) == sorted(
            f"{dag}.{task}" for task in tasks
        )


def test_the_failed_task_keeps_its_error(api: Any, derived: None) -> None:
    jobs = _jobs(api)
    (failed,) = results(api.get("/api/v1/runs", {"job_id": jobs["lc_shop_sql.fail_report"]["id"]}))
    assert failed["state"] == "FAIL"
    assert failed["error_message"].startswith("division by zero")
    (dag_run,) = results(api.get("/api/v1/runs", {"job_id": jobs["lc_shop_sql"]["id"]}))
    assert (dag_run["state"], dag_run["error_message"]) == ("FAIL", "task_failure")
    assert failed["parent_run_id"] == dag_run["run_id"]


def test_raw_clean_report_with_column_edges(api: Any, derived: None) -> None:
    jobs = _jobs(api)
    raw, clean, report = (_dataset(api, table) for table in ("raw", "clean", "report"))
    graph = api.get(
        "/api/v1/lineage/graph",
        {"node": f"dataset:{report['id']}", "direction": "upstream", "depth": 2, "columns": "true"},
    ).json()
    edges = {(edge["source"], edge["target"]) for edge in graph["edges"]}
    build_clean = f"job:{jobs['lc_shop_sql.build_clean']['id']}"
    build_report = f"job:{jobs['lc_shop_sql.build_report']['id']}"
    assert {
        (f"dataset:{raw['id']}", build_clean),
        (build_clean, f"dataset:{clean['id']}"),
        (f"dataset:{clean['id']}", build_report),
        (build_report, f"dataset:{report['id']}"),
    } <= edges
    columns = {
        (edge["source"], edge["source_field"], edge["target"], edge["target_field"])
        for edge in graph["column_edges"]
        if edge["job"] in (build_clean, build_report)
    }
    assert (f"dataset:{raw['id']}", "amount", f"dataset:{clean['id']}", "amount") in columns
    assert (f"dataset:{clean['id']}", "customer", f"dataset:{report['id']}", "customer") in columns


def test_search_finds_the_tables_and_the_jobs(api: Any, derived: None) -> None:
    found = {
        (hit["type"], hit["name"])
        for hit in results(api.get("/api/v1/search", {"q": "report", "limit": 50}))
    }
    assert {
        ("dataset", TABLES + "report"),
        ("job", "lc_shop_sql.build_report"),
        ("job", "lc_shop_sql.fail_report"),
    } <= found


def test_create_raw_wrote_only_the_table_its_complete_names(api, derived: None) -> None:
    """Marquez versions what the COMPLETE names: ``create_raw`` is no producer nor version
    of ``report`` and ``clean``, which its START listed only because the DROP named them."""
    jobs = _jobs(api)
    create_raw = "lc_shop_sql.create_raw"
    (run,) = results(api.get("/api/v1/runs", {"job_id": jobs[create_raw]["id"]}))
    assert run["state"] == "COMPLETE"
    detail = api.get(f"/api/v1/runs/{run['run_id']}").json()
    assert {o["alias"]["name"]: o["attempted"] for o in detail["outputs"]} == {
        TABLES + "raw": False,
        TABLES + "clean": True,
        TABLES + "report": True,
    }
    # table → (its one producing job, its attempting jobs); fail_report's run failed.
    expected = {
        "raw": (create_raw, set()),
        "clean": ("lc_shop_sql.build_clean", {create_raw}),
        "report": ("lc_shop_sql.build_report", {create_raw, "lc_shop_sql.fail_report"}),
    }
    for table, (writer, attempting) in expected.items():
        found = _dataset(api, table)
        shown = api.get(f"/api/v1/datasets/{found['id']}").json()
        assert [job["job"]["name"] for job in shown["producing_jobs"]] == [writer], table
        attempts = {job["job"]["name"]: job for job in shown["attempting_jobs"]}
        assert set(attempts) == attempting, table
        if create_raw in attempts:
            counts = attempts[create_raw]["run_count"], attempts[create_raw]["completed_run_count"]
            assert counts == (1, 0), table
        graph = api.get(f"/api/v1/lineage/graph?node=dataset:{found['id']}&depth=1").json()
        edge_id = f"job:{jobs[create_raw]['id']}->dataset:{found['id']}"
        [edge] = [edge for edge in graph["edges"] if edge["id"] == edge_id]
        assert edge["completed_run_count"] == int(table == "raw"), table
        # Through the Marquez mount: the versions, and the current one, are the writer's.
        base = f"/marquez/api/v1/namespaces/{quote(found['namespace'], safe='')}/datasets/"
        marquez = api.get(base + found["name"]).json()
        (writer_run,) = results(api.get("/api/v1/runs", {"job_id": jobs[writer]["id"]}))
        assert marquez["currentVersion"] == writer_run["run_id"], table
        versions = api.get(base + found["name"] + "/versions").json()["versions"]
        assert [v["createdByRun"]["id"] for v in versions] == [writer_run["run_id"]], table
    shown = api.get(f"/marquez/api/v1/jobs/runs/{run['run_id']}").json()
    assert [o["datasetVersionId"]["name"] for o in shown["outputDatasetVersions"]] == [
        TABLES + "raw"
    ]


def test_a_dag_run_without_a_start_starts_and_ends_at_its_end_event(api, derived: None) -> None:
    """docs/producers.md: ``airflow dags test`` sends no DAG START, so the catalog's DAG run
    starts and ends at the same instant, its one event's ``eventTime``."""
    jobs = _jobs(api)
    for dag in ("lc_shop_sql", "lc_five_tasks"):
        (end,) = [event for event in sent(dag) if event["job"]["name"] == dag]
        (run,) = results(api.get("/api/v1/runs", {"job_id": jobs[dag]["id"]}))
        assert run["started_at"] == run["ended_at"] is not None, run
        assert run["ended_at"][:19] == end["eventTime"][:19], (run, end["eventTime"])

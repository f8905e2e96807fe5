"""Apache Airflow 2.10.5 with its OpenLineage provider against the catalog: two DAGs run
with ``airflow dags test``.

Airflow is installed from PyPI in a cached virtualenv (conftest.py's AIRFLOW_PINS within
airflow-constraints.txt), with AIRFLOW_HOME in a temporary folder, a SQLite metadata
database and the SequentialExecutor. The DAGs (tests/producers/airflow_dags/) run SQL in a
scratch PostgreSQL database through SQLExecuteQueryOperator, so the provider's SQL parser
names each task's inputs, outputs and column lineage; one task's INSERT fails. The
provider's transport is composite: HTTP to the shipped web server and a file per DAG of
exactly what was sent. Everything is then checked through the read API, as a user would.

What issue 31 calls wrong today (a failed run listed as a writer, the DAG's job drawn with
no lineage, a column edge into a column the table lacks) is neither asserted nor denied
here: docs/producers.md records what was observed. Slow (an Airflow install on first use,
then about a minute): outside the default selection, run with ``pytest -m slow
tests/producers``.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.management import call_command
from django.db import connection

from catalog.services import derive
from ingest.models import Event
from ingest.services import create_token
from tests.producers.read_api import Api, lines, recording_transport

# django_db: pytest-django creates the test database only for a session holding a test that
# asks for it; the server fixture alone does not (the module's data is committed by the
# fixture, outside each test's transaction).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]
ROOT = Path(__file__).resolve().parents[2]
DAGS = Path(__file__).resolve().parent / "airflow_dags"
NAMESPACE = "airflow_harness"
ARTIFACTS = ROOT / "test-artifacts" / "airflow"
SHOP, FIVE = "lc_shop_sql", "lc_five_tasks"
TASKS = {
    SHOP: ("create_raw", "build_clean", "build_report", "fail_report"),
    FIVE: ("load_visits", "by_day", "by_page", "summary", "announce"),
}


@pytest.fixture(scope="module")
def airflow_catalog(
    airflow_venv: Path,
    server: str,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    airflow_scratch_database: str,
) -> Iterator[dict[str, Any]]:
    """Both DAGs run by Airflow, their events sent to the server and derived. The test
    database is written outside any test transaction (the server must see it), flushed
    after."""
    with django_db_blocker.unblock():
        try:
            yield _run_dags(airflow_venv, server, tmp_path_factory, airflow_scratch_database)
        finally:
            call_command("flush", interactive=False, verbosity=0)
            connection.close()


def _airflow_env(home: Path, database: str) -> dict[str, str]:
    parts = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"))
    scratch = urlunsplit(parts._replace(scheme="postgresql", path=f"/{database}"))
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENLINEAGE", "AIRFLOW", "DJANGO", "VIRTUAL_ENV", "PYTEST"))
    } | {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "SequentialExecutor",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW_CONN_LC_SCRATCH": scratch,
        "AIRFLOW__OPENLINEAGE__NAMESPACE": NAMESPACE,
    }


def _airflow(venv: Path, home: Path, env: dict[str, str], name: str, *args: str) -> int:
    result = subprocess.run(
        [venv / "bin" / "airflow", *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (home / f"airflow-{name}.log").write_text(result.stdout + result.stderr)
    return result.returncode


def _run_dags(
    venv: Path, base_url: str, tmp_path_factory: pytest.TempPathFactory, database: str
) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("airflow")
    ingest_token = create_token("airflow harness", "ingest")[1]
    read_token = create_token("airflow harness read", "read")[1]
    env = _airflow_env(home, database)
    codes = {"db migrate": _airflow(venv, home, env, "db-migrate", "db", "migrate")}
    sent: dict[str, Path] = {}
    for dag in (SHOP, FIVE):
        sent[dag] = home / f"{dag}.jsonl"
        dag_env = env | {
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                recording_transport(base_url, ingest_token, sent[dag])
            )
        }
        codes[dag] = _airflow(venv, home, dag_env, dag, "dags", "test", dag, "2026-01-02")
    # What was sent, for a developer to read (docs/producers.md); git-ignored.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for path in (*sent.values(), *home.glob("airflow-*.log")):
        shutil.copy(path, ARTIFACTS / path.name)
    derive.derive_events(list(Event.objects.order_by("id").values_list("id", flat=True)))
    return {
        "api": Api(base_url, read_token),
        "codes": codes,
        "sent": {dag: lines(path) for dag, path in sent.items()},
        "database": database,
    }


def _jobs(api: Api) -> dict[str, dict[str, Any]]:
    return {job["name"]: job for job in api.all("jobs", namespace=NAMESPACE)}


def _dataset(api: Api, database: str, table: str) -> dict[str, Any]:
    (dataset,) = api.all("datasets", name=f"{database}.public.{table}")
    return dataset


def test_every_event_the_provider_sent_is_stored(airflow_catalog: dict[str, Any]) -> None:
    api, sent = airflow_catalog["api"], airflow_catalog["sent"]
    assert airflow_catalog["codes"] == {"db migrate": 0, SHOP: 1, FIVE: 0}  # fail_report fails
    for dag, tasks in TASKS.items():  # a START and an end per task, and the DAG run's end
        assert len(sent[dag]) == 2 * len(tasks) + 1, [e["job"]["name"] for e in sent[dag]]
    stored = api.all("events")
    everything = sent[SHOP] + sent[FIVE]
    key = lambda event: (event["run"]["runId"], event["eventType"], event["job"]["name"])  # noqa: E731
    assert sorted(map(key, (event["payload"] for event in stored))) == sorted(map(key, everything))
    assert not [event for event in stored if event["derivation_status"] != "derived"]


def test_one_job_per_task_under_the_dag_job(airflow_catalog: dict[str, Any]) -> None:
    api = airflow_catalog["api"]
    jobs = _jobs(api)
    assert set(jobs) == {
        *TASKS,
        *(f"{dag}.{task}" for dag, tasks in TASKS.items() for task in tasks),
    }
    for dag, tasks in TASKS.items():
        detail = api.get(f"jobs/{jobs[dag]['id']}")
        assert sorted(child["name"] for child in detail["children"]) == sorted(
            f"{dag}.{task}" for task in tasks
        )
        for task in tasks:
            assert api.get(f"jobs/{jobs[f'{dag}.{task}']['id']}")["parent"]["name"] == dag


def test_run_states_and_the_failed_task_s_error(airflow_catalog: dict[str, Any]) -> None:
    api = airflow_catalog["api"]
    jobs = _jobs(api)
    states = {
        name: [run["state"] for run in api.all("runs", job_id=job["id"])]
        for name, job in jobs.items()
    }
    assert states == {
        SHOP: ["FAIL"],
        f"{SHOP}.create_raw": ["COMPLETE"],
        f"{SHOP}.build_clean": ["COMPLETE"],
        f"{SHOP}.build_report": ["COMPLETE"],
        f"{SHOP}.fail_report": ["FAIL"],
        FIVE: ["COMPLETE"],
        **{f"{FIVE}.{task}": ["COMPLETE"] for task in TASKS[FIVE]},
    }
    (failed,) = api.all("runs", job_id=jobs[f"{SHOP}.fail_report"]["id"])
    assert "division by zero" in failed["error_message"]
    # Each task's run is a child of its DAG's run (the parent facet's runId).
    (dag_run,) = api.all("runs", job_id=jobs[SHOP]["id"])
    assert failed["parent_run_id"] == dag_run["run_id"]


def _upstream(api: Api, dataset: dict[str, Any], depth: int) -> dict[str, Any]:
    return api.get(
        "lineage/graph",
        node=f"dataset:{dataset['id']}",
        direction="upstream",
        depth=depth,
        columns="true",
    )


def _column_edges(graph: dict[str, Any], target: dict[str, Any]) -> set[tuple[str, str, str]]:
    tables = {node["id"]: node["name"].rsplit(".", 1)[-1] for node in graph["nodes"]}
    return {
        (tables[edge["source"]], edge["source_field"], edge["target_field"])
        for edge in graph["column_edges"]
        if edge["target"] == f"dataset:{target['id']}"
    }


def _has_path(graph: dict[str, Any], source: str, job: str, target: str) -> bool:
    edges = {(edge["source"], edge["target"]) for edge in graph["edges"]}
    return (source, job) in edges and (job, target) in edges


def test_the_graph_runs_raw_clean_report_with_column_edges(
    airflow_catalog: dict[str, Any],
) -> None:
    api, database = airflow_catalog["api"], airflow_catalog["database"]
    jobs = _jobs(api)
    raw, clean, report = (_dataset(api, database, table) for table in ("raw", "clean", "report"))
    graph = _upstream(api, report, depth=2)
    node = lambda kind, item: f"{kind}:{item['id']}"  # noqa: E731
    assert _has_path(
        graph,
        node("dataset", raw),
        node("job", jobs[f"{SHOP}.build_clean"]),
        node("dataset", clean),
    )
    assert _has_path(
        graph,
        node("dataset", clean),
        node("job", jobs[f"{SHOP}.build_report"]),
        node("dataset", report),
    )
    assert {("raw", "customer", "customer"), ("raw", "amount", "amount"), ("raw", "id", "id")} <= (
        _column_edges(graph, clean)
    )
    assert ("clean", "customer", "customer") in _column_edges(graph, report)


def test_the_five_task_dag_fans_out_and_in(airflow_catalog: dict[str, Any]) -> None:
    api, database = airflow_catalog["api"], airflow_catalog["database"]
    jobs = _jobs(api)
    visits, by_day, by_page, summary = (
        _dataset(api, database, table)
        for table in ("visits", "visits_by_day", "visits_by_page", "visits_summary")
    )
    graph = _upstream(api, summary, depth=2)
    node = lambda kind, item: f"{kind}:{item['id']}"  # noqa: E731
    for middle, task in ((by_day, "by_day"), (by_page, "by_page")):
        assert _has_path(
            graph,
            node("dataset", visits),
            node("job", jobs[f"{FIVE}.{task}"]),
            node("dataset", middle),
        )
        assert _has_path(
            graph,
            node("dataset", middle),
            node("job", jobs[f"{FIVE}.summary"]),
            node("dataset", summary),
        )
    assert ("visits", "page", "page") in _column_edges(graph, by_page)
    # The BashOperator task reports no datasets: its job has none.
    announce = api.get(f"jobs/{jobs[f'{FIVE}.announce']['id']}")
    assert announce["inputs"] == [] and announce["outputs"] == []

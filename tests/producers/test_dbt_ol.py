"""dbt-ol (openlineage-dbt) against the catalog: seed, run with a failing model, test.

A real dbt project (tests/producers/dbt_project.py) is built in a scratch PostgreSQL
database by dbt-core with dbt-postgres, wrapped by dbt-ol, whose HTTP transport points at
the test server; a file transport beside it records exactly what dbt-ol sent. Everything
is then checked through the read API, as a user would. Slow (three dbt commands): outside
the default selection, run with ``pytest -m slow tests/producers``.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from catalog.services import derive
from ingest.models import Event
from ingest.services import create_token
from tests.producers.conftest import on_test_database
from tests.producers.dbt_project import FAILING, MART, SCHEMA, STAGING, write_project
from tests.producers.read_api import Api, lines, recording_transport

# django_db: pytest-django creates the test databases only for the aliases that the
# selected tests mark; without it, `pytest -m slow tests/producers` selected no test that
# needs one, no test database was made, and the module fixture wrote to DATABASE_URL's
# own database. The tests read over HTTP only; their transaction is never used.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]
ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "dbt_harness"
STRUCTURED_NAMESPACE = "dbt_harness_structured"
ARTIFACTS = ROOT / "test-artifacts" / "dbt-ol"


def _dbt_ol(venv: Path, project: Path, env: dict[str, str], *args: str) -> int:
    name = "-".join(arg.lstrip("-") for arg in args)
    result = subprocess.run(
        [venv / "bin" / "dbt-ol", *args, "--project-dir", project, "--profiles-dir", project],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (project / f"dbt-ol-{name}.log").write_text(result.stdout + result.stderr)
    return result.returncode


@pytest.fixture(scope="module")
def dbt_catalog(
    dbt_venv: Path,
    server: str,
    django_db_blocker: Any,
    tmp_path_factory: pytest.TempPathFactory,
    scratch_database: str,
) -> Iterator[dict[str, Any]]:
    """dbt-ol seed, run and test sent to the server; the events derived. The test database
    is written outside any test transaction (the server must see it) and flushed after."""
    with django_db_blocker.unblock():
        on_test_database()
        try:
            yield from _run_dbt(dbt_venv, server, tmp_path_factory, scratch_database)
        finally:
            call_command("flush", interactive=False, verbosity=0)
            connection.close()


def _run_dbt(
    dbt_venv: Path, base_url: str, tmp_path_factory: pytest.TempPathFactory, database: str
) -> Iterator[dict[str, Any]]:
    project = write_project(tmp_path_factory.mktemp("dbt"), database)
    sent = project / "sent.ndjson"
    ingest_token = create_token("dbt-ol harness", "ingest")[1]
    read_token = create_token("dbt-ol harness read", "read")[1]
    transport = recording_transport(base_url, ingest_token, sent)
    (project / "openlineage.yml").write_text(json.dumps({"transport": transport}))
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENLINEAGE", "DJANGO", "VIRTUAL_ENV"))
    } | {
        "PATH": f"{dbt_venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",  # dbt-ol runs `dbt`
        "OPENLINEAGE_CONFIG": str(project / "openlineage.yml"),
        "OPENLINEAGE_NAMESPACE": NAMESPACE,
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    codes = {
        command: _dbt_ol(dbt_venv, project, env, command) for command in ("seed", "run", "test")
    }
    # The same run again with structured logs, in a namespace of its own.
    structured = project / "sent-structured.ndjson"
    (project / "openlineage.yml").write_text(
        (project / "openlineage.yml").read_text().replace(str(sent), str(structured))
    )
    codes["run --consume-structured-logs"] = _dbt_ol(
        dbt_venv,
        project,
        env | {"OPENLINEAGE_NAMESPACE": STRUCTURED_NAMESPACE},
        "run",
        "--consume-structured-logs",
    )
    # What was sent, for a developer to read (docs/producers.md quotes it); git-ignored.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for path in (sent, structured, *project.glob("dbt-ol-*.log")):
        shutil.copy(path, ARTIFACTS / path.name)
    derive.derive_events(list(Event.objects.order_by("id").values_list("id", flat=True)))
    yield {
        "api": Api(base_url, read_token),
        "codes": codes,
        "sent": lines(sent),
        "structured": lines(structured),
        "database": database,
        "project": project,
    }


def _jobs(api: Api) -> dict[str, dict[str, Any]]:
    return {job["name"]: job for job in api.all("jobs", namespace=NAMESPACE)}


def _job_for(jobs: dict[str, dict[str, Any]], model: str) -> dict[str, Any]:
    (job,) = [job for name, job in jobs.items() if name.endswith(f".{model}")]
    return job


def _dataset(api: Api, database: str, table: str) -> dict[str, Any]:
    (dataset,) = api.all("datasets", name=f"{database}.{SCHEMA}.{table}")
    return dataset


def test_every_event_dbt_ol_sent_is_stored(dbt_catalog: dict[str, Any]) -> None:
    api = dbt_catalog["api"]
    sent = dbt_catalog["sent"] + dbt_catalog["structured"]
    assert dbt_catalog["codes"]["seed"] == 0
    assert dbt_catalog["codes"]["run"] != 0  # the failing model fails the run
    assert dbt_catalog["codes"]["test"] == 0
    assert len(dbt_catalog["sent"]) >= 10 and dbt_catalog["structured"]
    stored = api.all("events")
    assert len(stored) == len(sent)
    key = lambda event: (event["run"]["runId"], event["eventType"], event["job"]["name"])  # noqa: E731
    assert sorted(map(key, (event["payload"] for event in stored))) == sorted(map(key, sent))
    assert not [event for event in stored if event["derivation_status"] != "derived"]


def test_one_job_per_model_with_its_run_state(dbt_catalog: dict[str, Any]) -> None:
    api = dbt_catalog["api"]
    jobs = _jobs(api)
    for model in (*STAGING, MART, FAILING):
        _job_for(jobs, model)  # exactly one job per model
    states = {
        model: [run["state"] for run in api.all("runs", job_id=_job_for(jobs, model)["id"])]
        for model in (*STAGING, MART, FAILING)
    }
    assert states == {
        "stg_customers": ["COMPLETE"],
        "stg_orders": ["COMPLETE"],
        MART: ["COMPLETE"],
        FAILING: ["FAIL"],
    }


def test_the_graph_runs_from_staging_to_the_mart_with_column_edges(
    dbt_catalog: dict[str, Any],
) -> None:
    api, database = dbt_catalog["api"], dbt_catalog["database"]
    mart = _dataset(api, database, MART)
    graph = api.get(
        "lineage/graph", node=f"dataset:{mart['id']}", direction="upstream", depth=1, columns="true"
    )
    names = {node["name"] for node in graph["nodes"] if node["type"] == "dataset"}
    assert {f"{database}.{SCHEMA}.{model}" for model in STAGING} <= names
    mart_job = _job_for(_jobs(api), MART)
    assert any(node["id"] == f"job:{mart_job['id']}" for node in graph["nodes"])
    tables = {node["id"]: node["name"].rsplit(".", 1)[-1] for node in graph["nodes"]}
    columns = {
        (tables[edge["source"]], edge["source_field"], edge["target_field"])
        for edge in graph["column_edges"]
        if edge["target"] == f"dataset:{mart['id']}"
    }
    assert ("stg_orders", "amount", "total_amount") in columns, columns
    assert ("stg_customers", "first_name", "first_name") in columns, columns


def _seed_feeds_staging(api: Api, database: str, namespace: str) -> dict[str, bool]:
    """Per staging model: does a job of ``namespace`` read its seed and write the model?"""
    found = {}
    for seed, model in (("raw_customers", "stg_customers"), ("raw_orders", "stg_orders")):
        staging = _dataset(api, database, model)
        graph = api.get("lineage/graph", node=f"dataset:{staging['id']}", direction="upstream")
        names = {node["id"]: node for node in graph["nodes"]}
        readers = {
            edge["target"]
            for edge in graph["edges"]
            if edge["kind"] == "input"
            and names[edge["source"]]["name"] == f"{database}.{SCHEMA}.{seed}"
        }
        writers = {
            edge["source"]
            for edge in graph["edges"]
            if edge["kind"] == "output" and edge["target"] == f"dataset:{staging['id']}"
        }
        found[model] = any(names[job]["namespace"] == namespace for job in readers & writers)
    return found


def test_seeds_reach_the_staging_models(dbt_catalog: dict[str, Any]) -> None:
    """dbt-ol's default mode sends no seed job and no seed input of a staging model (its
    events name only ref()'d models as inputs); the catalog should still draw raw_customers
    → stg_customers for those runs, from the model's SQL (issue 26's column lineage work)."""
    api, database = dbt_catalog["api"], dbt_catalog["database"]
    assert _seed_feeds_staging(api, database, NAMESPACE) == {
        "stg_customers": True,
        "stg_orders": True,
    }


def _chain(database: str, table: str) -> str:
    return f"{database}.{SCHEMA}.{table}"


def test_seeds_staging_and_mart_are_one_chain_in_the_graph_and_the_marquez_mount(
    dbt_catalog: dict[str, Any],
) -> None:
    """dbt-ol's default mode (issue 26 part 2): from the mart upstream, both surfaces walk
    raw_* → staging job → stg_* → mart job → mart, and the columns follow the same chain
    (raw_orders.amount → stg_orders.amount → customer_orders.total_amount)."""
    api, database = dbt_catalog["api"], dbt_catalog["database"]
    mart = _dataset(api, database, MART)
    names = {
        seed: _chain(database, seed) for seed in ("raw_customers", "raw_orders", *STAGING, MART)
    }
    # Native: the table chain and the column chain, two dataset hops up.
    graph = api.get(
        "lineage/graph", node=f"dataset:{mart['id']}", direction="upstream", depth=2, columns="true"
    )
    by_id = {node["id"]: node["name"] for node in graph["nodes"]}
    hops = {
        (by_id[edge["source"]], by_id[edge["target"]]) for edge in graph["edges"] if edge["kind"]
    }
    jobs = {name: node for node, name in by_id.items() if node.startswith("job:")}
    staging_jobs = {_job_for(_jobs(api), model)["name"]: model for model in STAGING}
    for job_name, model in staging_jobs.items():
        seed = "raw_customers" if model == "stg_customers" else "raw_orders"
        assert (names[seed], job_name) in hops, (seed, hops)
        assert (job_name, names[model]) in hops
        assert job_name in jobs
    mart_job = _job_for(_jobs(api), MART)["name"]
    assert {(names[model], mart_job) for model in STAGING} | {(mart_job, names[MART])} <= hops
    columns = {
        (by_id[e["source"]], e["source_field"], by_id[e["target"]], e["target_field"])
        for e in graph["column_edges"]
    }
    assert (names["raw_orders"], "amount", names["stg_orders"], "amount") in columns, columns
    assert (names["stg_orders"], "amount", names[MART], "total_amount") in columns
    # The Marquez mount: the same chain from the mart's node, and the same column chain.
    namespace = mart["namespace"]
    body = api.marquez("lineage", nodeId=f"dataset:{namespace}:{names[MART]}", depth=5)
    pairs = {
        (edge["origin"], edge["destination"])
        for node in body["graph"]
        for edge in node["inEdges"] + node["outEdges"]
    }
    for job_name, model in staging_jobs.items():
        seed = "raw_customers" if model == "stg_customers" else "raw_orders"
        job_node = f"job:{NAMESPACE}:{job_name}"
        assert (f"dataset:{namespace}:{names[seed]}", job_node) in pairs, (seed, pairs)
        assert (job_node, f"dataset:{namespace}:{names[model]}") in pairs
    total = f"datasetField:{namespace}:{names[MART]}:total_amount"
    walked = api.marquez("column-lineage", nodeId=total, depth=5)
    fields = {node["id"] for node in walked["graph"]}
    assert {
        f"datasetField:{namespace}:{names['stg_orders']}:amount",
        f"datasetField:{namespace}:{names['raw_orders']}:amount",
    } <= fields, fields


def test_structured_logs_name_jobs_by_node_and_add_one_child_per_statement(
    dbt_catalog: dict[str, Any],
) -> None:
    """--consume-structured-logs: jobs are dbt's unique ids (model.<project>.<model>), each
    SQL statement is a child job (….sql.N), seeds are inputs, a failure carries its error."""
    api, database = dbt_catalog["api"], dbt_catalog["database"]
    jobs = {job["name"]: job for job in api.all("jobs", namespace=STRUCTURED_NAMESPACE)}
    for model in (*STAGING, MART, FAILING):
        assert f"model.lc_shop.{model}" in jobs
    children = [name for name in jobs if name.startswith("model.lc_shop.stg_orders.sql.")]
    assert children
    detail = api.get(f"jobs/{jobs[children[0]]['id']}")
    assert detail["parent"]["name"] == "model.lc_shop.stg_orders"
    failing = api.all("runs", job_id=jobs[f"model.lc_shop.{FAILING}"]["id"])
    assert [run["state"] for run in failing] == ["FAIL"]
    sent_failure = [
        event
        for event in dbt_catalog["structured"]
        if event["job"]["name"] == f"model.lc_shop.{FAILING}" and event["eventType"] == "FAIL"
    ]
    assert "errorMessage" in sent_failure[0]["run"]["facets"]
    assert _seed_feeds_staging(api, database, STRUCTURED_NAMESPACE) == {
        "stg_customers": True,
        "stg_orders": True,
    }

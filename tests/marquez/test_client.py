"""Marquez's own Python client (marquez-python, from PyPI) against the real web server.

The server is the shipped one (``python -m config.server``: granian, config.wsgi with the
ingest fast path) on a free 127.0.0.1 port, reading the test database. Events go in through
the mount's POST /lineage over HTTP, are derived, and then EVERY read method of the client
is called and its values checked: this is what "works unchanged" means.
"""

import inspect
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from django.db import connection
from marquez_client import MarquezClient
from marquez_client.errors import APIError

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.faults.processes import shipped_web_server
from tests.marquez.conftest import EVENTS, JOB_NS, LOAD_RUN, PG, REPORT_RUN, S3, SECRET

# The client's read methods, and the writes it has (Marquez's old API: we answer 405).
READS = {
    "get_namespace",
    "list_namespaces",
    "list_events",
    "get_source",
    "list_sources",
    "get_dataset",
    "get_dataset_version",
    "list_dataset_versions",
    "list_datasets",
    "get_job",
    "list_jobs",
    "list_job_runs",
    "get_job_run",
    "get_column_lineage_by_dataset",
    "get_column_lineage_by_dataset_field",
    "get_column_lineage_by_job",
    "list_tags",
}


def test_the_read_list_is_every_read_method_of_the_installed_client() -> None:
    public = {
        name
        for name, _ in inspect.getmembers(MarquezClient, inspect.isfunction)
        if not name.startswith("_")
    }
    writes = {name for name in public if name.startswith(("create_", "tag_", "mark_"))}
    assert public - writes == READS


@pytest.fixture
def server(transactional_db: None) -> Iterator[str]:
    try:
        with shipped_web_server() as url:
            yield url
    finally:
        connection.close()  # the server's connections are gone; ours must not be reused


def _names(items: list[dict[str, Any]]) -> set[str]:
    return {item["name"] for item in items}


@pytest.mark.timeout(180)
def test_every_read_method_of_marquez_python(
    server: str, ingest_token: str, read_token: str
) -> None:
    for document in EVENTS:
        response = requests.post(
            f"{server}/marquez/api/v1/lineage",
            json=document,
            headers={"Authorization": f"Bearer {ingest_token}"},
            timeout=10,
        )
        assert response.status_code == 201, response.text
    derive_events(list(Event.objects.values_list("id", flat=True)))
    client = MarquezClient(f"{server}/marquez", api_key=read_token)
    called: set[str] = set()

    def call(name: str, *args: Any, **kwargs: Any) -> Any:
        called.add(name)
        return getattr(client, name)(*args, **kwargs)

    namespaces = call("list_namespaces")["namespaces"]
    assert _names(namespaces) == {JOB_NS, PG, S3}
    assert call("get_namespace", S3)["name"] == S3

    jobs = call("list_jobs", JOB_NS)
    assert jobs["totalCount"] == 2
    assert _names(jobs["jobs"]) == {"etl.load_orders", "report.build"}
    load = call("get_job", JOB_NS, "etl.load_orders")
    assert load["location"] == "https://git.example.com/etl/load_orders.py"
    assert load["type"] == "BATCH"
    assert load["latestRun"]["state"] == "COMPLETED"
    assert load["latestRun"]["durationMs"] == 300_000
    assert load["outputs"] == [{"namespace": S3, "name": "raw/orders/daily"}]

    runs = call("list_job_runs", JOB_NS, "report.build")
    assert [(run["id"], run["state"]) for run in runs["runs"]] == [(REPORT_RUN, "FAILED")]
    run = call("get_job_run", LOAD_RUN)
    assert run["state"] == "COMPLETED"
    assert run["facets"]["environment-properties"]["environment-properties"] == {
        "DB_PASSWORD": "***REDACTED***"
    }
    assert run["outputDatasetVersions"][0]["datasetVersionId"] == {
        "namespace": S3,
        "name": "raw/orders/daily",
        "version": LOAD_RUN,
    }

    datasets = call("list_datasets", S3)
    assert [d["name"] for d in datasets["datasets"]] == ["raw/orders/daily"]
    daily = call("get_dataset", S3, "raw/orders/daily")  # a "/" in the name: raw-path routing
    assert [f["name"] for f in daily["fields"]] == ["order_id", "total"]
    assert {c["name"]: c["inputFields"][0]["field"] for c in daily["columnLineage"]} == {
        "order_id": "id",
        "total": "amount",
    }
    versions = call("list_dataset_versions", S3, "raw/orders/daily")
    assert versions["totalCount"] == 1
    assert versions["versions"][0]["version"] == LOAD_RUN
    assert versions["versions"][0]["createdByRun"]["state"] == "COMPLETED"
    version = call("get_dataset_version", S3, "raw/orders/daily", LOAD_RUN)
    assert [f["name"] for f in version["fields"]] == ["order_id", "total"]

    # Column lineage: the client sends withDownstream=False (capitalised) and depth=20.
    upstream = call("get_column_lineage_by_dataset", S3, "raw/orders/daily")
    assert {node["id"] for node in upstream["graph"]} == {
        f"datasetField:{S3}:raw/orders/daily:order_id",
        f"datasetField:{S3}:raw/orders/daily:total",
        f"datasetField:{PG}:shop.public.orders:id",
        f"datasetField:{PG}:shop.public.orders:amount",
    }
    chain = call(
        "get_column_lineage_by_dataset_field", PG, "analytics.public.daily_totals", "total_sum"
    )
    assert {node["data"]["field"] for node in chain["graph"]} == {"total_sum", "total", "amount"}
    by_job = call("get_column_lineage_by_job", JOB_NS, "etl.load_orders", with_downstream=True)
    assert f"datasetField:{PG}:analytics.public.daily_totals:total_sum" in {
        node["id"] for node in by_job["graph"]
    }

    assert call("list_tags") == {"tags": []}
    assert call("list_sources") == {"sources": []}
    with pytest.raises(APIError):
        call("get_source", "nowhere")

    listed = call("list_events")
    assert listed["totalCount"] == len(EVENTS)
    assert SECRET not in str(listed) and "***REDACTED***" in str(listed)
    assert call("list_events", namespace=JOB_NS)["totalCount"] == len(EVENTS)
    assert call("list_events", namespace="elsewhere")["events"] == []

    with pytest.raises(APIError):
        client.get_dataset(S3, "no/such/dataset")
    assert called == READS

"""A small two-job world ingested through the mount's POST /lineage and derived.

``etl.load_orders`` reads ``postgres://db:5432`` ``shop.public.orders`` and writes
``s3://lake`` ``raw/orders/daily`` (a name with "/"); ``report.build`` reads that and writes
``analytics.public.daily_totals``. Column lineage on both outputs, a secret in a run facet.
"""

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.test import Client

from catalog.services.derive import derive_events
from ingest.models import Event
from ingest.services import create_token

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/client/python"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
JOB_NS = "airflow-prod"
PG = "postgres://db:5432"
S3 = "s3://lake"
LOAD_RUN = str(uuid.UUID("01930000-0000-7000-8000-000000000001"))
REPORT_RUN = str(uuid.UUID("01930000-0000-7000-8000-000000000002"))
SECRET = "hunter2-not-for-your-eyes"


def facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"{PRODUCER}#facet", **fields}


def schema(*names: str) -> dict[str, Any]:
    return facet(fields=[{"name": name, "type": "BIGINT"} for name in names])


def column_lineage(mapping: dict[str, tuple[str, str, str]]) -> dict[str, Any]:
    return facet(
        fields={
            target: {
                "inputFields": [
                    {
                        "namespace": namespace,
                        "name": name,
                        "field": field,
                        "transformations": [
                            {"type": "DIRECT", "subtype": "IDENTITY", "description": "copied"}
                        ],
                    }
                ]
            }
            for target, (namespace, name, field) in mapping.items()
        }
    )


def event(
    event_type: str,
    time: str,
    run_id: str,
    job: str,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": JOB_NS, "name": job, "facets": job_facets or {}},
        "inputs": inputs,
        "outputs": outputs,
    }


ORDERS = {
    "namespace": PG,
    "name": "shop.public.orders",
    "facets": {"schema": schema("id", "amount")},
}
DAILY = {
    "namespace": S3,
    "name": "raw/orders/daily",
    "facets": {
        "schema": schema("order_id", "total"),
        "columnLineage": column_lineage(
            {
                "order_id": (PG, "shop.public.orders", "id"),
                "total": (PG, "shop.public.orders", "amount"),
            }
        ),
    },
}
TOTALS = {
    "namespace": PG,
    "name": "analytics.public.daily_totals",
    "facets": {
        "schema": schema("total_sum"),
        "columnLineage": column_lineage({"total_sum": (S3, "raw/orders/daily", "total")}),
    },
}
LOAD_FACETS = {
    "sourceCodeLocation": facet(type="git", url="https://git.example.com/etl/load_orders.py"),
    "documentation": facet(description="Loads the day's orders into the lake."),
    "jobType": facet(processingType="BATCH", integration="AIRFLOW", jobType="TASK"),
}

EVENTS = [
    event(
        "START",
        "2026-11-01T10:00:00Z",
        LOAD_RUN,
        "etl.load_orders",
        [ORDERS],
        [DAILY],
        run_facets={
            "environment-properties": facet(**{"environment-properties": {"DB_PASSWORD": SECRET}})
        },
        job_facets=LOAD_FACETS,
    ),
    event(
        "COMPLETE",
        "2026-11-01T10:05:00Z",
        LOAD_RUN,
        "etl.load_orders",
        [ORDERS],
        [DAILY],
        job_facets=LOAD_FACETS,
    ),
    event("START", "2026-11-01T11:00:00Z", REPORT_RUN, "report.build", [DAILY], [TOTALS]),
    event("FAIL", "2026-11-01T11:01:30Z", REPORT_RUN, "report.build", [DAILY], [TOTALS]),
]


def ingest_world(client: Client, prefix: str = "/marquez/api/v1") -> None:
    for document in EVENTS:
        response = client.post(f"{prefix}/lineage", document, content_type="application/json")
        assert response.status_code in (200, 201), response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))


@pytest.fixture
def world(ingest_client: Client) -> None:
    ingest_world(ingest_client)


@pytest.fixture(scope="module")
def world_once(module_transaction: Callable[[], AbstractContextManager[None]]) -> None:
    """``ingest_world`` once for a module whose every test reads the world (ADR 0113, ADR
    0210): written inside ``module_transaction``, with an ingest token of its own, and each
    test's ``db`` rolled back to it. Such a module overrides ``world`` with a fixture that
    asks for ``world_once`` and ``db``; a module with a test that must find the database
    empty (or a transactional test) keeps the ``world`` above."""
    with module_transaction():
        ingest_world(Client(HTTP_AUTHORIZATION=f"Bearer {create_token('world', 'ingest')[1]}"))


class MarquezClient:
    """The Django test client with the raw path a WSGI server gives (gunicorn's RAW_URI)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def get(self, path: str, **params: Any) -> Any:
        # The test client decodes the path into PATH_INFO, as a WSGI server does.
        raw = f"/marquez/api/v1{path}"
        return self.client.get(raw, params, RAW_URI=raw)


@pytest.fixture
def mz(read_client: Client, steady_token_cache: None) -> MarquezClient:
    return MarquezClient(read_client)

"""Fixtures for catalog tests: event builders on top of the real ingest path."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def run_event(
    event_type: str,
    seconds: float,
    run_id: str,
    job: tuple[str, str] = ("ns", "job"),
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": event_type,
        "eventTime": at(seconds),
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": job[0], "name": job[1], "facets": job_facets or {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }
    return event


def dataset(namespace: str, name: str, **facets: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "facets": facets}


def facet(**fields: Any) -> dict[str, Any]:
    return {
        "_producer": "https://example.com/test",
        "_schemaURL": "https://example.com/f",
        **fields,
    }


@pytest.fixture
def new_run_id() -> str:
    return str(uuid.uuid4())

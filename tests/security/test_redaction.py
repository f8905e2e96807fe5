"""Secrets in payloads are redacted on every read path; the raw log keeps them."""

from pathlib import Path

import orjson
import pytest
from django.test import override_settings

from ingest.redaction import REDACTED, redact
from tests.conftest import CORPUS


def test_debezium_connector_password_is_redacted() -> None:
    event = orjson.loads((Path(CORPUS) / "debezium" / "debezium_event.json").read_bytes())
    text = orjson.dumps(redact(event)).decode()
    assert "database.password=postgres" not in text
    assert f"database.password={REDACTED}" in text
    assert "database.hostname=postgres" in text  # not a secret: kept
    assert event == orjson.loads((Path(CORPUS) / "debezium" / "debezium_event.json").read_bytes())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"password": "hunter2"}, {"password": REDACTED}),
        ({"DB_PASSWORD": "x", "user": "me"}, {"DB_PASSWORD": REDACTED, "user": "me"}),
        ({"aws_secret_access_key": 42}, {"aws_secret_access_key": REDACTED}),
        ({"Authorization": "Bearer abc"}, {"Authorization": REDACTED}),
        (["api_key: abc", "region=eu"], [f"api_key: {REDACTED}", "region=eu"]),
        ("postgres://app:s3cr3t@db:5432/shop", f"postgres://app:{REDACTED}@db:5432/shop"),
        ("s3://bucket/path@version", "s3://bucket/path@version"),
        ({"token": {"nested": "kept as structure"}}, {"token": {"nested": "kept as structure"}}),
        ({"tokens_count": 3}, {"tokens_count": REDACTED}),
    ],
)
def test_secret_shapes_are_redacted(value, expected) -> None:
    assert redact(value) == expected


def test_the_key_list_is_a_setting() -> None:
    from django.conf import settings

    with override_settings(LINEAGE={**settings.LINEAGE, "REDACT_KEYS": ["internal_id"]}):
        assert redact({"internal_id": "1", "password": "p"}) == {
            "internal_id": REDACTED,
            "password": "p",
        }
    with override_settings(LINEAGE={**settings.LINEAGE, "REDACT_KEYS": []}):
        assert redact({"password": "p"}) == {"password": "p"}


@pytest.mark.django_db
def test_admin_payload_view_redacts_secrets(admin_client, ingest_client) -> None:
    from ingest.models import Event

    raw = (Path(CORPUS) / "debezium" / "debezium_event.json").read_bytes()
    response = ingest_client.post("/api/v1/lineage", data=raw, content_type="application/json")
    assert response.status_code == 201
    event = Event.objects.get()
    assert "database.password=postgres" in orjson.dumps(event.received_payload).decode()
    page = admin_client.get(f"/admin/ingest/event/{event.id}/change/")
    assert page.status_code == 200
    assert "database.password=postgres" not in page.content.decode()
    assert f"database.password={REDACTED}" in page.content.decode()


@pytest.mark.django_db
def test_no_read_endpoint_reflects_the_debezium_password(ingest_client, read_client) -> None:
    from catalog.models import Run
    from catalog.services import derive_events
    from ingest.models import Event

    raw = (Path(CORPUS) / "debezium" / "debezium_event.json").read_bytes()
    assert ingest_client.post("/api/v1/lineage", data=raw, content_type="application/json")
    event = Event.objects.get()
    derive_events([event.id])
    run = Run.objects.get()
    paths = [
        "/api/v1/events",
        f"/api/v1/events/{event.id}",
        "/api/v1/events/export",
        f"/api/v1/runs/{run.run_uuid}",
        f"/api/v1/jobs/{run.job_id}",
        f"/api/v1/jobs/{run.job_id}/runs",
        "/api/v1/runs",
    ]
    for path in paths:
        response = read_client.get(path)
        assert response.status_code == 200, path
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert b"database.password=postgres" not in body, path
    detail = read_client.get(f"/api/v1/events/{event.id}").content.decode()
    assert f"database.password={REDACTED}" in detail

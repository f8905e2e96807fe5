"""Small builders for ingest tests."""

import gzip
import json
import uuid
from typing import Any

import orjson
import psycopg
from django.db import connection
from django.test import Client
from django.test.client import Client as _Client

LINEAGE = "/api/v1/lineage"
BATCH = "/api/v1/lineage/batch"
EDGES = "/api/v1/lineage/edges"
METADATA = "/api/v1/metadata"


def run_event(**overrides: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventType": "START",
        "eventTime": "2026-11-29T10:00:00.000Z",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "tests", "name": "job"},
        "inputs": [{"namespace": "postgres://db:5432", "name": "shop.public.orders"}],
        "outputs": [{"namespace": "s3://lake", "name": "orders"}],
        "producer": "https://example.com/tests",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    event.update(overrides)
    return event


def dumps(document: Any) -> bytes:
    """JSON as a client would send it (the stdlib for integers beyond 64 bits)."""
    try:
        return orjson.dumps(document)
    except orjson.JSONEncodeError:
        return json.dumps(document, ensure_ascii=False).encode()


def post_json(client: Client | _Client, url: str, document: Any, **extra: Any) -> Any:
    return client.post(url, data=dumps(document), content_type="application/json", **extra)


def post_gzip(client: Client, url: str, document: Any, **extra: Any) -> Any:
    return client.post(
        url,
        data=gzip.compress(orjson.dumps(document)),
        content_type="application/json",
        HTTP_CONTENT_ENCODING="gzip",
        **extra,
    )


def error_paths(response: Any) -> set[str]:
    body = response.json()
    return {error["path"] for error in body.get("errors", [])}


def second_connection() -> psycopg.Connection:
    """Another autocommit connection to the test database, as another reader (or a
    session holding a lock) would have: it sees only what has been committed."""
    database = connection.settings_dict
    return psycopg.connect(
        host=database["HOST"],
        port=database["PORT"],
        user=database["USER"],
        dbname=database["NAME"],
        autocommit=True,
    )

"""The dataset detail read by the fault tests: its prepared reads (ADR 0119) are what a
kept connection outlives a PostgreSQL restart with."""

import http.client
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import orjson
import psycopg

from tests.faults import processes
from tests.ingest.helpers import run_event

LAKE, TABLE = "s3://lake", "orders"


class Reader:
    """A keep-alive HTTP client that GETs one path and records every status and body."""

    def __init__(self, base_url: str, token: str) -> None:
        parts = urlsplit(base_url)
        self.address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.connection = http.client.HTTPConnection(*self.address, timeout=30)
        self.answers: list[tuple[int, bytes]] = []

    def get(self, path: str) -> tuple[int, bytes]:
        for _ in range(2):  # a reconnect after the server closed an idle connection
            try:
                self.connection.request("GET", path, headers=self.headers)
                response = self.connection.getresponse()
                answer = (response.status, response.read())
                break
            except (ConnectionError, http.client.HTTPException):
                self.connection.close()
                self.connection = http.client.HTTPConnection(*self.address, timeout=30)
        else:
            raise AssertionError("the server did not answer")
        self.answers.append(answer)
        return answer


def _event() -> dict[str, Any]:
    """A completed run writing a dataset with a schema and the run's statistics about it, so
    the detail shows fields (aliases-and-fields read) and run facts (run-facts read)."""
    return run_event(
        eventType="COMPLETE",
        outputs=[
            {
                "namespace": LAKE,
                "name": TABLE,
                "facets": {
                    "schema": {
                        "_producer": "https://example.com/tests",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
                        "fields": [{"name": "id", "type": "bigint"}],
                    }
                },
                "outputFacets": {
                    "outputStatistics": {
                        "_producer": "https://example.com/tests",
                        "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json",
                        "rowCount": 17,
                    }
                },
            }
        ],
    )


def detail_path(env: dict[str, str], post: Callable[[str, Any], Any], database: str) -> str:
    """Posts the event (``post(path, document)``), derives it in a command of its own (no
    worker to start), and returns the dataset detail's path."""
    post("/api/v1/lineage", _event())
    processes.manage(env, "rederive")
    dataset = _dataset_with_facts(database)
    assert dataset is not None
    return f"/api/v1/datasets/{dataset}"


def _dataset_with_facts(database: str) -> int | None:
    with psycopg.connect(database) as connection:
        row = connection.execute(
            "SELECT d.id FROM catalog_dataset d JOIN catalog_dataset_alias a"
            " ON a.dataset_id = d.id JOIN catalog_run_dataset_facet f ON f.alias_id = a.id"
            " WHERE a.namespace = %s AND a.name = %s LIMIT 1",
            [LAKE, TABLE],
        ).fetchone()
    return row[0] if row else None


def prepared_detail(reader: Reader, path: str) -> bytes:
    """The detail's answer after enough requests that every web thread's connection has
    the reads prepared (and PostgreSQL past its five custom plans)."""
    answers = {reader.get(path) for _ in range(24)}
    assert len(answers) == 1, "the detail answered differently before anything happened"
    ((status, body),) = answers
    assert status == 200, body
    document = orjson.loads(body)
    assert document["fields"] and document["run_facts"], "both prepared reads must have rows"
    return body

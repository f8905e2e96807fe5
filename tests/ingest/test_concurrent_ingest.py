"""The same events sent at once by many clients to the shipped web server (two processes
of four threads) on the real database: each stored once, every client answered as the
docs say (docs/ingest.md: 201 for the copy stored, 200 "duplicate" with its id for every
other; a batch's events with a usable core stored)."""

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.db import connection

from ingest.models import Event
from ingest.services import create_token
from tests.faults.processes import current_database_url, service_env, web
from tests.ingest.helpers import BATCH, LINEAGE, post_json, run_event, second_connection

pytestmark = pytest.mark.django_db(transaction=True)
CLIENTS = 8  # the server's two processes of four threads each
ROUNDS = 8


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    settings = connection.settings_dict
    env = service_env(current_database_url(), "redis://127.0.0.1:1/0")  # no broker needed
    if settings.get("PASSWORD"):
        env["PGPASSWORD"] = settings["PASSWORD"]
    log = tmp_path / "web.log"
    service, url = web(env, log)
    try:
        yield int(url.rsplit(":", 1)[1]), log
    finally:
        service.stop()


def post_at_once(port: int, requests: list[tuple[str, bytes]], token: str) -> list[tuple[int, Any]]:
    """Send each request from its own thread and connection, all released together."""
    answers: list[tuple[int, Any]] = [(0, None)] * len(requests)
    start = threading.Barrier(len(requests))

    def send(index: int, path: str, body: bytes) -> None:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        client.connect()
        start.wait()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        client.request("POST", path, body, headers)
        response = client.getresponse()
        answers[index] = (response.status, orjson.loads(response.read()))
        client.close()

    threads = [
        threading.Thread(target=send, args=(index, path, body))
        for index, (path, body) in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_one_event_sent_at_once_by_many_clients_is_stored_once(server) -> None:
    """One 201 and the rest 200 "duplicate", all with the one row's id, through the fast
    path and (with a query string) the view's DRF dispatch alike."""
    port, _ = server
    token = create_token("race", "ingest")[1]
    for _ in range(ROUNDS):
        event = orjson.dumps(run_event())
        paths = [LINEAGE if index % 2 else f"{LINEAGE}?via=dispatch" for index in range(CLIENTS)]
        answers = post_at_once(port, [(path, event) for path in paths], token)
        assert sorted(status for status, _ in answers) == [200] * (CLIENTS - 1) + [201], answers
        assert {body["status"] for _, body in answers} == {"created", "duplicate"}
        assert len({body["id"] for _, body in answers}) == 1
    assert Event.objects.count() == ROUNDS


def test_batches_sharing_events_in_opposite_orders_are_all_stored(server) -> None:
    """Two batches with the same new events in different orders each waited for the
    other's uncommitted copy of its next event: PostgreSQL failed one of them as a deadlock,
    answered 503 "the database is unavailable", nothing stored (6 of 8 in a round). Sent
    again on a deadlock, the waits piled up past the statement timeout instead (a 503 too);
    inserted in digest order, no batch waits for one that waits for it (ADR 0153)."""
    port, log = server
    token = create_token("race", "ingest")[1]
    for _ in range(ROUNDS):
        events = [run_event() for _ in range(200)]
        forward, backward = orjson.dumps(events), orjson.dumps(events[::-1])
        answers = post_at_once(
            port, [(BATCH, forward if index % 2 else backward) for index in range(CLIENTS)], token
        )
        for status, body in answers:
            assert status == 200, (status, body)
            assert body["summary"]["successful"] == 200, body
    assert Event.objects.count() == ROUNDS * 200
    assert "deadlock" not in log.read_text()


def test_a_repeat_whose_first_copy_is_removed_meanwhile_is_stored_again(
    ingest_client, monkeypatch
) -> None:
    """Retention (catalog/services/retention.py) removes old events while producers send.
    An event sent again found its first copy (the INSERT did nothing), which retention then
    removed before the ids of repeats were looked up: nothing was found, and the request
    failed with a KeyError (a 500)."""
    from ingest import services

    event = run_event()
    first = post_json(ingest_client, LINEAGE, event)
    assert first.status_code == 201
    lookup = services._server_binding_cursor  # the repeat's lookup (its INSERT is kept)
    removed: list[int] = []

    def removed_first(*args: Any, **kwargs: Any) -> Any:
        if not removed:
            with second_connection() as other:  # as retention's own transaction would
                removed.append(
                    other.execute(
                        "DELETE FROM ingest_event WHERE id = %s", [first.json()["id"]]
                    ).rowcount
                )
        return lookup(*args, **kwargs)

    monkeypatch.setattr(services, "_server_binding_cursor", removed_first)
    again = post_json(ingest_client, LINEAGE, event)
    assert removed == [1]
    assert again.status_code == 201, again.content
    assert Event.objects.get().payload == event
    assert again.json()["id"] == Event.objects.get().id

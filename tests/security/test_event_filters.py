"""docs/security.md: the raw events' producer, job namespace, job name and runId as sent are
shown redacted but stored as received, so an exact filter on one of them answered whether a
guess of the secret it holds was right (found or not), as a metadata filter on a redacted key
would. Events posted through the ingest API; every guess a read token could try is refused
the same way, right or wrong, and a filter with nothing to redact still finds its event."""

from urllib.parse import urlencode

import pytest
from django.test import Client

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.ingest.helpers import LINEAGE, post_json, run_event

pytestmark = pytest.mark.django_db
SECRET = "hunter2evt"
PRODUCER = f"https://ci:{SECRET}@git.example.com/etl"
JOB = f"load password={SECRET}"
RUN_ID = f"run token={SECRET}"


def test_no_event_filter_confirms_a_guessed_secret(
    ingest_client: Client, read_client: Client
) -> None:
    event = run_event(producer=PRODUCER, job={"namespace": "tests", "name": JOB})
    event["run"] = {"runId": RUN_ID}
    assert post_json(ingest_client, LINEAGE, event).status_code in (200, 201)
    derive_events(list(Event.objects.values_list("id", flat=True)))

    (shown,) = read_client.get("/api/v1/events?job_namespace=tests").json()["results"]
    assert SECRET not in str(shown)
    for name, right in (("producer", PRODUCER), ("job_name", JOB), ("run_id", RUN_ID)):
        for guess in (right, right.replace(SECRET, "wrong")):
            answer = read_client.get(f"/api/v1/events?{urlencode({name: guess})}")
            assert answer.status_code == 400, (name, guess, answer.content)
            assert answer.json()["errors"][0]["path"] == f"/{name}"
    for guess in (RUN_ID, RUN_ID.replace(SECRET, "wrong")):
        answer = read_client.get(f"/api/v1/runs/{guess}")
        assert answer.status_code == 400, (guess, answer.content)
    dsn = f"postgres://app:{SECRET}@db:5432"  # an event's namespace, exported redacted
    answer = read_client.get(f"/api/v1/events/export?{urlencode({'namespace': dsn})}")
    assert answer.status_code == 400, answer.content
    exported = b"".join(read_client.get("/api/v1/events/export?namespace=tests").streaming_content)
    assert exported.count(b"\n") == 1 and SECRET.encode() not in exported

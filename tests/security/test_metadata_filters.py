"""docs/security.md "Secrets inside events": metadata records' additionalValues are shown
redacted, and "metadata filters on a redacted key are refused (they would confirm a
guess)". A filter on a key the redaction does not know confirms a guess just as well when
the value holds the secret: a DSN's password, a `password=` assignment in a string, the
`value` of a name/value pair. A record posted through the ingest API and derived; every
filter an attacker holding a read token would try finds nothing, and the filters that do
not touch a secret still work.
"""

from urllib.parse import urlencode

import orjson
import pytest
from django.test import Client

from catalog.services.derive import derive_events
from ingest.models import Event

pytestmark = pytest.mark.django_db
VALUES = {
    "stage": "Production",
    "connection": "postgres://app:hunter2dsn@db.internal:5432/sales",
    "options": "user=app password=hunter2opt sslmode=require",
    "key": "db.password",
    "value": "hunter2pair",
}


def test_no_metadata_filter_confirms_a_guessed_secret(
    ingest_client: Client, read_client: Client
) -> None:
    record = {"resource": "model-1", "subject": "alice", "action": "deploy"}
    posted = ingest_client.post(
        "/api/v1/metadata",
        data=orjson.dumps({**record, "additionalValues": VALUES}),
        content_type="application/json",
    )
    assert posted.status_code == 201, posted.content
    derive_events(list(Event.objects.values_list("id", flat=True)))

    def found(**filters: str) -> list[dict]:
        answer = read_client.get(f"/api/v1/metadata?{urlencode(filters)}")
        assert answer.status_code in (200, 400), answer.content
        return answer.json().get("results", []) if answer.status_code == 200 else []

    (shown,) = found(stage="Production")  # a filter without a secret still finds it
    text = orjson.dumps(shown).decode()
    assert "hunter2" not in text
    guesses = [
        {"connection": VALUES["connection"]},
        {"options": VALUES["options"]},
        {"value": VALUES["value"]},
        {"key": "db.password", "value": VALUES["value"]},
    ]
    for guess in guesses:
        assert found(**guess) == [], f"the filter {guess} confirmed the secret"
    wrong = {"connection": VALUES["connection"].replace("hunter2dsn", "wrong")}
    assert found(**wrong) == []  # right or wrong, the same answer

"""An event stored before the ingest path was sped up (ADR 0096) is still recognised when
it is sent again: its idempotency key (the digest) is the same, byte for byte.

The digests below were computed by the code on main at 9444a8a (``serialise``) for these
exact bodies: a compact event (orjson's document), one that takes the stdlib decoder
(spaces, an integer beyond 64 bits, escapes, U+0000, an exponent) and a dataset event.
"""

import pytest
from django.db import connection

from ingest.models import Event
from ingest.parsing import parse_json
from ingest.services import serialise
from ingest.validation import validate_openlineage
from tests.ingest.helpers import BATCH, LINEAGE

STORED_BY_MAIN = [
    (
        b'{"eventType":"START","eventTime":"2026-11-29T10:00:00.000Z","run":{"runId":'
        b'"0b1f6c1e-8d2a-4c57-9a53-2f3ad5a1c001"},"job":{"namespace":"tests","name":"golden"},'
        b'"inputs":[],"outputs":[{"namespace":"s3://lake","name":"orders"}],'
        b'"producer":"https://example.com/tests"}',
        "907cb4319335b72742e7db6fc1cb2d25104ed6b4b2108c1944acc9a554827fcf",
    ),
    (
        b'{"producer": "https://example.com/tests", "eventTime": "2026-11-29T10:00:01Z", '
        b'"job": {"name": "golden", "namespace": "tests"}, "run": {"runId": '
        b'"0b1f6c1e-8d2a-4c57-9a53-2f3ad5a1c002", "facets": {"x": {"big": '
        b'123456789012345678901234567890, "small": 1e-7, "text": "caf\\u00e9 \\u0000"}}}}',
        "f64c8712f12ce6e52842d2417eb78c363107dd31ff173a42f6977b6c231561f2",
    ),
    (
        b'{"eventTime":"2026-11-29T10:00:02+0200","dataset":{"namespace":"s3://lake",'
        b'"name":"orders","facets":{"n":{"v":1.5e300,"w":[true,false,null,0.25]}}},'
        b'"producer":"https://example.com/tests"}',
        "d4bfebe715d23e4a3e54be18cf3a7f954964f9dedb51fc780f008bcd7675d8f0",
    ),
]


@pytest.mark.parametrize(("body", "digest"), STORED_BY_MAIN)
def test_the_digest_is_the_one_main_stored(body: bytes, digest: str) -> None:
    assert serialise(validate_openlineage(parse_json(body))).digest.hex() == digest


def _stored_as_main_did(body: bytes, digest: str, kind: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO ingest_event (kind, payload, digest, derivation_status) "
            "VALUES (%s, %s::jsonb, decode(%s, 'hex'), 'done') RETURNING id",
            [kind, body.decode().replace("\\u0000", "\\ufffd"), digest],
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_events_stored_by_main_are_duplicates_when_sent_again(ingest_client) -> None:
    kinds = ["run", "run", "dataset"]
    ids = [
        _stored_as_main_did(body, digest, kind)
        for (body, digest), kind in zip(STORED_BY_MAIN, kinds, strict=True)
    ]
    for (body, _), event_id in zip(STORED_BY_MAIN, ids, strict=True):
        response = ingest_client.post(LINEAGE, data=body, content_type="application/json")
        assert response.status_code == 200, response.content
        assert response.json() == {"id": event_id, "status": "duplicate"}
    batch = b"[" + b",".join(body for body, _ in STORED_BY_MAIN) + b"]"
    response = ingest_client.post(BATCH, data=batch, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["summary"]["successful"] == 3
    assert Event.objects.count() == 3

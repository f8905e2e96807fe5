"""Metadata records derived before ADR 0179 hold their additionalValues' keys as sent, and
those derived before ADR 0056 their values too; ``/metadata?<key>=<value>`` matches what is
stored, so a guessed secret key confirmed itself on such a row. Migration 0041 and
``manage.py redact_metadata`` redact them again from the row itself, as derivation stores
them today (ADR 0187), a span of ids per transaction, idempotent and resumable; and the
filter refuses a key or value that redaction changes, whatever the store holds.

The rows before are written as the earlier releases wrote them (an UPDATE of the derived
row, as a migration test writes the old shape): the event stays as sent, so a rederive
says what the redacted row must be.
"""

import importlib
import io
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client

from catalog.models import MetadataRecord
from catalog.services import metadata_keys
from catalog.services.derive import derive_events
from core.redaction import REDACTED
from ingest.models import Event

pytestmark = pytest.mark.django_db

SECRET_KEY = "dsn https://etl:S3CRETK3Y@db/shop"
SENT = {
    SECRET_KEY: "shop",
    "c token=S3CRETA": "1",
    "c token=S3CRETB": "2",
    "password": "S3CRETPW",
    "options": "user=app password=S3CRETOPT",
    "stage": "Production",
}
# What derivation stored before ADR 0179: values redacted (ADR 0056; the value of a key
# naming a token too), keys as sent.
BEFORE_0179 = {
    **SENT,
    "c token=S3CRETA": REDACTED,
    "c token=S3CRETB": REDACTED,
    "password": REDACTED,
    "options": f"user=app password={REDACTED}",
}
# Today's: keys redacted too, two that redact alike both kept (the later one numbered).
REDACTED_NOW = {
    f"dsn https://etl:{REDACTED}@db/shop": "shop",
    f"c token={REDACTED}": REDACTED,
    f"c token={REDACTED} (2)": REDACTED,
    "password": REDACTED,
    "options": f"user=app password={REDACTED}",
    "stage": "Production",
}


def _post(client: Client, subject: str, values: dict[str, Any]) -> None:
    record = {"resource": "model-1", "subject": subject, "action": "deploy"}
    posted = client.post(
        "/api/v1/metadata",
        data=orjson.dumps({**record, "additionalValues": values}),
        content_type="application/json",
    )
    assert posted.status_code == 201, posted.content


def _store_as_before(subject: str, values: dict[str, Any]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_metadata_record SET additional_values = %s::jsonb WHERE subject = %s",
            [orjson.dumps(values).decode(), subject],
        )


@pytest.fixture
def before(ingest_client: Client) -> dict[str, int]:
    """Three records: one as derived before ADR 0179 (keys as sent), one before ADR 0056
    (keys and values as sent), one derived today. Their ids by subject."""
    for subject in ("before-0179", "before-0056", "today"):
        _post(ingest_client, subject, SENT)
    derive_events(list(Event.objects.values_list("id", flat=True)))
    _store_as_before("before-0179", BEFORE_0179)
    _store_as_before("before-0056", SENT)
    return dict(MetadataRecord.objects.values_list("subject", "id"))


def _stored() -> dict[str, dict[str, Any]]:
    return dict(MetadataRecord.objects.values_list("subject", "additional_values"))


def _holding_a_secret() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM catalog_metadata_record "
            "WHERE additional_values::text LIKE '%%S3CRET%%'"
        )
        return cursor.fetchone()[0]


def test_the_command_redacts_rows_stored_before_and_a_guessed_key_finds_nothing(before):
    by_key = {SECRET_KEY: "shop"}
    assert MetadataRecord.objects.search(values=by_key).count() == 2  # the oracle
    assert _holding_a_secret() == 2
    out = io.StringIO()
    call_command("redact_metadata", "--span", "1", stdout=out)
    assert "redact_metadata: 2 redacted" in out.getvalue()
    assert _stored() == {name: REDACTED_NOW for name in ("before-0179", "before-0056", "today")}
    assert _holding_a_secret() == 0
    assert not MetadataRecord.objects.search(values=by_key).exists()
    shown = {f"dsn https://etl:{REDACTED}@db/shop": "shop", "stage": "Production"}
    assert MetadataRecord.objects.search(values=shown).count() == 3  # found as shown
    # What a rederive of the events derives, the command wrote.
    redacted = _stored()
    call_command("rederive", stdout=io.StringIO())
    assert _stored() == redacted


def test_it_is_idempotent_and_resumes_past_an_id(before):
    done = metadata_keys.redact_stored(span=1, after=before["before-0179"])
    # Only what lies past the id: the other old row if its id is larger.
    assert done.updated == (1 if before["before-0056"] > before["before-0179"] else 0)
    assert _stored()["before-0179"] == BEFORE_0179
    assert metadata_keys.redact_stored().updated == 1  # the rest
    assert metadata_keys.redact_stored().updated == 0  # nothing left: redacted is a fixed point
    assert _holding_a_secret() == 0


def test_a_row_changed_while_its_span_is_redacted_keeps_the_newer_document(before, monkeypatch):
    """The span is read without locks; the write goes only where the row still holds what
    was read, so a rederive or a purge that replaced it meanwhile is not overwritten."""
    newer = {"written": "meanwhile"}
    read = metadata_keys.redacted_document

    def replaced_meanwhile(stored: str) -> str | None:
        answer = read(stored)
        MetadataRecord.objects.filter(id=before["before-0179"]).update(additional_values=newer)
        return answer

    monkeypatch.setattr(metadata_keys, "redacted_document", replaced_meanwhile)
    done = metadata_keys.redact_stored(span=1_000)
    assert done.updated == 1  # before-0056's; before-0179 had changed under it
    assert _stored()["before-0179"] == newer
    assert _stored()["before-0056"] == REDACTED_NOW


def test_a_document_orjson_cannot_read_is_left_and_counted(before):
    with connection.cursor() as cursor:  # jsonb keeps it; derivation never writes it
        cursor.execute(
            "UPDATE catalog_metadata_record SET additional_values = %s::jsonb "
            "WHERE subject = 'today'",
            ['{"n": 1e400, "dsn https://u:S3CRETN@h": "1"}'],
        )
    out = io.StringIO()
    call_command("redact_metadata", stdout=out)
    assert "2 redacted" in out.getvalue() and "1 records left as they are" in out.getvalue()
    assert _holding_a_secret() == 1


def test_migration_0041_runs_the_redaction(before):
    migration = importlib.import_module("catalog.migrations.0041_redact_metadata_keys")
    assert migration.Migration.atomic is False  # each span commits on its own
    migration.redact(None, SimpleNamespace(connection=connection))
    assert _holding_a_secret() == 0


def test_a_bad_span_is_refused():
    with pytest.raises(Exception, match="--span"):
        call_command("redact_metadata", "--span", "0", stdout=io.StringIO())


# --- the filter: refused when redaction changes its key or value ------------------------


def _filter(client: Client, **filters: str):
    return client.get(f"/api/v1/metadata?{urlencode(filters)}")


def test_a_filter_key_that_redaction_changes_is_refused_whatever_the_store_holds(
    before, read_client: Client
):
    """Before the migration ran (or on a row an old release derived while it ran), a
    filter on the key as sent found the row: refused, right guess or wrong, and the
    problem names the key as the answers show it."""
    wrong = SECRET_KEY.replace("S3CRETK3Y", "WRONG")
    for key in (SECRET_KEY, wrong):
        answer = _filter(read_client, **{key: "shop"})
        assert answer.status_code == 400, answer.content
        body = answer.content.decode()
        assert "S3CRET" not in body and "WRONG" not in body and REDACTED in body
        assert "filter on the key shown" in body
    secret = _filter(read_client, **{"c token=S3CRETA": REDACTED})  # a key naming a secret
    assert secret.status_code == 400 and "S3CRET" not in secret.content.decode()
    found = _filter(read_client, **{f"dsn https://etl:{REDACTED}@db/shop": "shop"})
    assert found.status_code == 200
    assert [row["subject"] for row in found.json()["results"]] == ["today"]


def test_a_filter_value_that_redaction_changes_is_refused(before, read_client: Client):
    """A row derived before ADR 0056 holds ``options`` as sent: a guessed password in the
    value found it. Refused; the value as shown still finds the rows stored redacted."""
    guessed = _filter(read_client, options="user=app password=S3CRETOPT")
    assert guessed.status_code == 400, guessed.content
    assert "S3CRET" not in guessed.content.decode()
    shown = _filter(read_client, options=f"user=app password={REDACTED}")
    assert shown.status_code == 200
    assert {row["subject"] for row in shown.json()["results"]} == {"before-0179", "today"}


@pytest.mark.parametrize("name", ["resource", "subject", "action"])
def test_a_record_field_filter_that_redaction_changes_is_refused(
    name: str, ingest_client: Client, read_client: Client
) -> None:
    """``resource``, ``subject`` and ``action`` are shown redacted (ADR 0056) and a row
    derived before held them as sent: ``?subject=<the secret as sent>`` found it, a guess
    confirmed. Refused, right guess or wrong; the field as shown still finds the row."""
    sent = "deploy https://etl:S3CRETF@db/shop"
    record = {"resource": "model-1", "subject": "ml-team", "action": "deploy", name: sent}
    posted = ingest_client.post(
        "/api/v1/metadata", data=orjson.dumps(record), content_type="application/json"
    )
    assert posted.status_code == 201, posted.content
    derive_events(list(Event.objects.values_list("id", flat=True)))
    shown = _filter(read_client, **{name: sent.replace("S3CRETF", REDACTED)})
    assert shown.status_code == 200 and len(shown.json()["results"]) == 1
    MetadataRecord.objects.update(**{name: sent})  # as derived before ADR 0056
    for guess in (sent, sent.replace("S3CRETF", "WRONG")):
        answer = _filter(read_client, **{name: guess})
        assert answer.status_code == 400, answer.content
        assert "S3CRET" not in answer.content.decode()

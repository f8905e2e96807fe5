"""docs/notifications.md: the message "is built once, then, and redacted as every read path
is (docs/security.md)". A producer's column names and types carry secrets (each a different
shape, so a failure names it); the change they make is delivered to a real receiver, and
neither the stored payload nor the bytes the receiver gets may hold a secret, while
/api/v1/changes shows the same change redacted the same way."""

import orjson
import pytest

from catalog.models import WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from core.redaction import REDACTED
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event
from tests.notify.receivers import receiver

MARK = "S3CRET"
NS = "postgres://db:5432"
GONE = f"note password={MARK}c1"  # a column name, as a careless producer may write it
RETYPED = ("amount", f"numeric token={MARK}t1", f"decimal secret={MARK}t2")


def load(fields: list[tuple[str, str]], seconds: int, run: str) -> dict:
    schema = facet(fields=[{"name": name, "type": kind} for name, kind in fields])
    out = dataset(NS, "orders", schema=schema)
    return run_event("COMPLETE", seconds, run, ("etl", "load"), outputs=[out])


@pytest.mark.django_db(transaction=True)
def test_a_delivered_change_holds_no_secret_a_producer_put_in_a_schema(
    allow_loopback: None, read_client: object
) -> None:
    name, before, after = RETYPED
    with receiver() as hook:
        WebhookSubscription.objects.create(name="all", url=hook.url)
        derive(
            load([("id", "bigint"), (GONE, "text"), (name, before)], 0,
                 "00000000-0000-0000-0000-000000000001"),
            load([("id", "bigint"), (name, after)], 100, "00000000-0000-0000-0000-000000000002"),
        )  # fmt: skip
        ids = [str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)]
        assert len(ids) == 2  # the column removed, the column retyped
        delivery.deliver_many(ids)
        bodies = [item.body for item in hook.received]
    stored = orjson.dumps(list(WebhookDelivery.objects.values_list("payload", flat=True)))
    listed = read_client.get("/api/v1/changes").content  # type: ignore[attr-defined]
    for text in (stored, *bodies, listed):
        at = text.find(MARK.encode())
        assert at < 0, text[max(at - 100, 0) : at + 40]
    data = {row["data"]["kind"]: row["data"] for row in map(orjson.loads, bodies)}
    assert REDACTED in data["column_removed"]["column"]
    assert REDACTED in data["type_changed"]["old_type"] + data["type_changed"]["new_type"]

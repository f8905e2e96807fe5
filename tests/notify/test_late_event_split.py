"""docs/notifications.md, "What is sent, and when": a late event that lands between two known
schemas splits their change, and the two halves are new changes, so they are sent; the
change they replace is withdrawn from /api/v1/changes but its delivery stays; and a rederive
afterwards records nothing new, so nothing is sent again."""

import pytest

from catalog.models import DatasetChange, DeliveryStatus, WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from catalog.services.derive import rederive
from tests.api.project_fixtures import derive
from tests.api.test_changes import V1, V2, V3, load
from tests.notify.receivers import receiver


def sent_changes() -> set[tuple[str, str, str, str]]:
    return {
        (data["kind"], data["column"], data["old_type"], data["new_type"])
        for data in (
            row["data"] for row in WebhookDelivery.objects.values_list("payload", flat=True)
        )
    }


@pytest.mark.django_db(transaction=True)
def test_a_late_event_between_two_schemas_sends_both_halves_once(allow_loopback: None) -> None:
    with receiver() as hook:
        WebhookSubscription.objects.create(name="split", url=hook.url)
        derive(load(V1, 0, 0), load(V3, 200, 2))  # V1 -> V3: one change per column
        first = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)}
        assert sent_changes() == {
            ("column_removed", "note", "text", ""),
            ("type_changed", "amount", "int", "numeric"),
            ("column_added", "currency", "", "text"),
            ("column_added", "region", "", "text"),
        }
        derive(load(V2, 100, 1))  # late, and earlier: V1 -> V2 -> V3
        halves = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)} - first
        assert len(halves) == 4  # V1 -> V2: note, amount, currency; V2 -> V3: region
        listed = set(DatasetChange.objects.values_list("kind", "column", "run_id"))
        assert len(listed) == 4  # the V1 -> V3 changes are withdrawn, the halves listed
        rederive()
        derive(load(V3, 300, 3))  # V3 again, later: nothing new
        everything = {str(pk) for pk in WebhookDelivery.objects.values_list("id", flat=True)}
        assert everything == first | halves
        assert delivery.deliver_many(sorted(everything)) == dict.fromkeys(
            sorted(everything), DeliveryStatus.DELIVERED
        )
        received = hook.ids()
    assert sorted(received) == sorted(everything)  # each once, the withdrawn ones too

"""The admin log (docs/admin.md "Who can do what", docs/security.md "Admin"): every change an
admin action makes is in it, with who and what; and it shows an entry only to whoever may
see the object it names, so the log is no way around "nobody else sees tokens" or "only
stewards see subscriptions"."""

import json

import pytest
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.test import Client

from catalog.models import DeliveryStatus, WebhookDelivery, WebhookSubscription
from ingest.models import ApiToken, DeadLetter
from ingest.services import create_token
from tests.ingest.helpers import run_event
from tests.notify.conftest import FAST

pytestmark = pytest.mark.django_db
LOG = "/admin/admin/logentry/"

# Every admin action and the test that shows its change in the admin log. A new action
# fails test_every_admin_action_is_known until it is logged and listed here.
LOGGED_ACTIONS = {
    ("ingest", "apitoken", "revoke"): "test_actions_without_a_form_of_their_own_are_logged",
    ("catalog", "webhooksubscription", "rotate_secret"): "the same",
    ("catalog", "webhooksubscription", "send_test"): "the same",
    ("catalog", "webhookdelivery", "replay"): "the same",
    ("ingest", "deadletter", "replay_selected"): "the same",
    ("catalog", "aliasrule", "disable_rules"): "tests/admin/test_curation.py",
    ("catalog", "aliasrule", "enable_rules"): "tests/admin/test_curation.py (same code)",
    ("catalog", "dataset", "merge_action"): "tests/admin/test_curation.py",
    ("catalog", "dataset", "unpin_action"): "catalog/services/display_names.py",
    ("catalog", "datasetalias", "pin_action"): "catalog/services/display_names.py",
    ("catalog", "datasetalias", "split_action"): "tests/admin/test_split.py",
    ("ingest", "event", "rederive_selected"): "tests/admin/test_curation.py",
    ("catalog", "dataset", "retire_action"): "tests/catalog/test_retirement.py",
    ("catalog", "dataset", "restore_action"): "tests/catalog/test_retirement.py",
    ("catalog", "dataset", "retire_namespace_action"): "tests/admin/test_retirement_admin.py",
    ("catalog", "job", "retire_action"): "tests/catalog/test_retirement.py",
    ("catalog", "job", "restore_action"): "tests/catalog/test_retirement.py",
    ("catalog", "job", "retire_namespace_action"): "tests/admin/test_retirement_admin.py",
    ("catalog", "retirement", "restore_action"): "tests/admin/test_retirement_admin.py",
}


def test_every_admin_action_is_known() -> None:
    found = set()
    for model, model_admin in admin.site._registry.items():
        for action in model_admin.actions or ():
            name = action if isinstance(action, str) else action.__name__
            found.add((model._meta.app_label, model._meta.model_name, name))
    assert found <= set(LOGGED_ACTIONS), sorted(found - set(LOGGED_ACTIONS))


def _logged(user, obj) -> list[str]:
    entries = LogEntry.objects.filter(
        user=user, object_id=str(obj.pk), content_type__model=obj._meta.model_name
    )
    return [entry.get_change_message() or entry.change_message for entry in entries]


def test_actions_without_a_form_of_their_own_are_logged(
    super_client: Client, superuser, steward_client: Client, steward, settings
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    token, _ = create_token("spark prod", "ingest")
    super_client.post(
        "/admin/ingest/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert _logged(superuser, token), "revoking a token is not in the admin log"

    subscription = WebhookSubscription.objects.create(name="down", url="http://127.0.0.1:9/")
    for action in ("rotate_secret", "send_test"):
        steward_client.post(
            "/admin/catalog/webhooksubscription/",
            {"action": action, "_selected_action": [subscription.pk]},
        )
    assert len(_logged(steward, subscription)) == 2, "rotating and testing are not logged"

    sent = WebhookDelivery.objects.get()
    WebhookDelivery.objects.filter(pk=sent.pk).update(status=DeliveryStatus.DEAD, attempts=3)
    steward_client.post(
        "/admin/catalog/webhookdelivery/", {"action": "replay", "_selected_action": [sent.pk]}
    )
    assert WebhookDelivery.objects.get(pk=sent.pk).status == DeliveryStatus.PENDING
    assert _logged(steward, sent), "replaying a delivery is not logged"

    value = json.dumps(run_event()).encode()
    letter = DeadLetter.objects.create(
        topic="lineage",
        partition=0,
        offset=7,
        kind="openlineage",
        value=value,
        value_size=len(value),
        reason_code="invalid-event",
        reason="refused before a fix",
    )
    steward_client.post(
        "/admin/ingest/deadletter/", {"action": "replay_selected", "_selected_action": [letter.pk]}
    )
    letter.refresh_from_db()
    assert letter.replayed_at is not None
    assert _logged(steward, letter), "replaying a dead letter is not logged"


def test_the_admin_log_shows_an_entry_only_to_who_may_see_its_object(
    super_client: Client, steward_client: Client, reader_client: Client, settings
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    super_client.post("/admin/ingest/apitoken/add/", {"name": "airflow-prod-7", "scope": "read"})
    steward_client.post(
        "/admin/catalog/webhooksubscription/add/",
        {
            "name": "orders-hook-3",
            "url": "http://127.0.0.1:8080/hook",
            "active": "on",
            "downstream_depth": "5",
        },
    )
    token_entry = LogEntry.objects.get(content_type__model="apitoken")
    hook_entry = LogEntry.objects.get(content_type__model="webhooksubscription")

    for client, shown in (
        (super_client, {"airflow-prod-7", "orders-hook-3"}),
        (steward_client, {"orders-hook-3"}),
        (reader_client, set()),
    ):
        page = client.get(LOG).content.decode()
        found = client.get(LOG, {"q": "prod"}).content.decode()
        for name in ("airflow-prod-7", "orders-hook-3"):
            assert (name in page) == (name in shown), (name, page[-2000:])
        assert ("airflow-prod-7" in found) == ("airflow-prod-7" in shown)
        for entry, name in ((token_entry, "airflow-prod-7"), (hook_entry, "orders-hook-3")):
            answer = client.get(f"{LOG}{entry.pk}/change/", follow=True)
            assert (name in answer.content.decode()) == (name in shown)

"""Who cannot change what, tried as an attacker would (docs/security.md "Actors", docs/admin.md
"Who can do what"): a catalog reader posts every action of every admin page, every add,
change and delete form and the curation pages of their own (retire, re-derive since)
with the steward's confirmation fields; a steward posts the superuser's token actions and
tries to edit or delete raw events and the admin log. Nothing in the database may change.

The pages hide what a user may not do; this posts it anyway, from the admin's own registry,
so an action or admin added later is tried too.
"""

import json
from datetime import UTC, datetime

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.urls import reverse

from catalog.models import (
    AliasRule,
    Dataset,
    DeliveryStatus,
    Job,
    WebhookDelivery,
    WebhookSubscription,
)
from catalog.notify import delivery
from catalog.services import retirement
from catalog.services.retirement import Actor
from ingest.models import DeadLetter, Event
from ingest.services import create_token
from tests.admin.test_admin_log import LOGGED_ACTIONS
from tests.ingest.helpers import run_event

pytestmark = pytest.mark.django_db
# Written by logging in, not by anything a user does.
UNWATCHED = {"django_session"}
CONFIRMED = {"confirm": "yes", "post": "yes", "reason": "attacker", "index": "0"}


def _state() -> dict[str, str]:
    """Every table's rows, as a digest per table: one statement for all of them (a test
    takes it after each of some 400 posts; one statement a table was 60 round trips)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = sorted(name for (name,) in cursor.fetchall() if name not in UNWATCHED)
        rows = "string_agg(t::text, chr(10) ORDER BY t::text)"
        cursor.execute(
            " UNION ALL ".join(
                f"SELECT %s, md5(coalesce({rows}, '')) FROM \"{table}\" t" for table in tables
            ),
            tables,
        )
        return dict(cursor.fetchall())


@pytest.fixture
def everything(catalog: list[int], steward, settings) -> None:
    """A row of every kind an action works on: the derived catalog, a rule, a token, a
    subscription with a dead delivery, a dead letter, a retired dataset."""
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True}
    AliasRule.objects.create(
        slug="r",
        action="equate",
        namespace="a",
        name_pattern="(.*)",
        target_namespace="b",
        target_name=r"\1",
    )
    create_token("spark prod", "ingest")
    subscription = WebhookSubscription.objects.create(name="hook", url="http://127.0.0.1:9/")
    sent = delivery.test_send(subscription)
    WebhookDelivery.objects.filter(pk=sent.pk).update(status=DeliveryStatus.DEAD)
    value = json.dumps(run_event()).encode()
    DeadLetter.objects.create(
        topic="t",
        partition=0,
        offset=1,
        kind="openlineage",
        value=value,
        value_size=len(value),
        reason_code="invalid-event",
        reason="x",
    )
    retirement.retire(Dataset.objects.order_by("id").last(), Actor.of(steward), "gone")


def _tries(only: set[str] | None = None) -> list[tuple[str, dict]]:
    """(url, form) of every action, add, change and delete of every registered admin, on
    its first two rows (``only``: of those models, as app_label.model_name)."""
    tried = []
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        if only is not None and f"{meta.app_label}.{meta.model_name}" not in only:
            continue
        base = f"admin:{meta.app_label}_{meta.model_name}"
        keys = [
            str(pk) for pk in model._default_manager.order_by("pk").values_list("pk", flat=True)[:2]
        ]
        names = [a if isinstance(a, str) else a.__name__ for a in model_admin.actions or ()]
        for action in [*names, "delete_selected"]:
            form = {"action": action, "_selected_action": keys, "survivor": keys[:1], **CONFIRMED}
            tried.append((reverse(f"{base}_changelist"), form))
        tried.append((reverse(f"{base}_add"), {}))
        for key in keys:
            tried.append((reverse(f"{base}_change", args=[key]), {}))
            tried.append((reverse(f"{base}_delete", args=[key]), CONFIRMED))
    return tried


def test_every_admin_action_is_tried() -> None:
    tried = {form.get("action") for _, form in _tries()}
    assert {action for _, _, action in LOGGED_ACTIONS} <= tried


def test_a_reader_changes_nothing_whatever_it_posts(everything, reader_client: Client) -> None:
    before = _state()
    dataset, job = Dataset.objects.order_by("id").first(), Job.objects.order_by("id").first()
    extra = [
        (reverse("admin:catalog_dataset_retire", args=[dataset.pk]), {"reason": "attacker"}),
        (reverse("admin:catalog_job_retire", args=[job.pk]), {"reason": "attacker"}),
        (reverse("admin:catalog_rederive"), {"since": datetime(2020, 1, 1, tzinfo=UTC)}),
    ]
    for url, form in [*_tries(), *extra]:
        answer = reader_client.post(url, form)
        assert answer.status_code in (200, 302, 403, 404), (url, form, answer.status_code)
        assert _state() == before, f"a reader changed something with {url} {form}"


def test_a_steward_cannot_touch_tokens_raw_events_or_the_admin_log(
    everything, steward_client: Client
) -> None:
    # Re-deriving events is a steward's (tests/admin/test_curation.py); editing them is not.
    before = _state()
    tries = _tries({"ingest.apitoken", "ingest.event", "admin.logentry"})
    for url, form in [
        (url, form) for url, form in tries if form.get("action") != "rederive_selected"
    ]:
        answer = steward_client.post(url, form)
        assert answer.status_code in (200, 302, 403, 404), (url, form, answer.status_code)
        assert _state() == before, f"a steward changed something with {url} {form}"
    assert Event.objects.exists()


def test_a_tokens_page_shows_its_revocation_and_not_even_a_superuser_undoes_it(
    super_client: Client,
) -> None:
    """docs/deploy.md: a token's page shows its *revoked at* but does not edit it; a
    revoked token stays listed (the record of who could write)."""
    from ingest.models import ApiToken
    from ingest.services import revoke_token

    token, _ = create_token("leaked", "ingest")
    revoke_token(token.pk)
    page = reverse("admin:ingest_apitoken_change", args=[token.pk])
    assert "revoked at" in super_client.get(page).content.decode().lower()
    before = _state()["ingest_api_token"]
    forms = [
        (page, {"name": "renamed", "scope": "read", "revoked_at_0": "", "revoked_at_1": ""}),
        (reverse("admin:ingest_apitoken_delete", args=[token.pk]), CONFIRMED),
        (
            reverse("admin:ingest_apitoken_changelist"),
            {"action": "delete_selected", "_selected_action": [token.pk], **CONFIRMED},
        ),
    ]
    for url, form in forms:
        super_client.post(url, form)
        assert _state()["ingest_api_token"] == before, url
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    assert (
        "leaked" in super_client.get(reverse("admin:ingest_apitoken_changelist")).content.decode()
    )


def test_no_form_or_session_write_is_taken_without_its_csrf_token(everything, steward) -> None:
    """docs/security.md "Admin": CSRF on every form. A steward's browser, lured to a page
    that posts to the catalog, sends the session cookie but no CSRF token: every admin
    action and form, the curation pages and the Marquez mount's session writes refuse it."""
    from urllib.parse import quote

    forged = Client(enforce_csrf_checks=True)
    forged.force_login(steward)
    dataset, job = Dataset.objects.order_by("id").first(), Job.objects.order_by("id").first()
    mount = "/marquez/api/v1/namespaces"
    marquez = f"{mount}/{quote(job.namespace, safe='')}/jobs/{quote(job.name, safe='')}"
    before = _state()
    tries = [
        *_tries(),
        (reverse("admin:catalog_dataset_retire", args=[dataset.pk]), {"reason": "forged"}),
        (reverse("admin:catalog_rederive"), {"since": datetime(2020, 1, 1, tzinfo=UTC)}),
    ]
    for url, form in tries:
        assert forged.post(url, form).status_code == 403, (url, form)
    for method, url in (
        ("delete", marquez),
        ("post", f"{marquez}/tags/pii"),
        ("put", "/marquez/api/v1/tags/pii"),
    ):
        assert getattr(forged, method)(url, RAW_URI=url).status_code == 403, (method, url)
    assert _state() == before
    # The same session with its token is let through: the 403s above were CSRF's.
    honest = Client()
    honest.force_login(steward)
    assert honest.delete(marquez, RAW_URI=marquez).status_code == 200

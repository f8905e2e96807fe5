"""docs/admin.md and docs/security.md: the admin shows producer text redacted and hides a
webhook receiver's answer from readers. Django's changelist also filters by any lookup on
the model's own columns written into the address (``?payload__icontains=…``), and the event
search by the exact producer, job name or runId as stored: both answered whether a guessed
secret was right (the row listed or not), as the API refuses to (ADR 0173). A lookup that
reaches a text or JSON column is now a 400 unless one of the page's filters offers it, and
an event search whose term redaction would change finds nothing, right guess or wrong."""

from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from catalog.models import WebhookDelivery, WebhookSubscription
from catalog.notify import delivery
from core.admin_base import TEXT_FIELDS, BoundedAdmin
from ingest.models import Event
from tests.ingest.helpers import LINEAGE, post_json, run_event
from tests.notify.conftest import FAST

pytestmark = pytest.mark.django_db
SECRET = "hunter2adm"
LOG = "/admin/catalog/webhookdelivery/"
EVENTS = "/admin/ingest/event/"


def listed(client: Client, page: str, params: dict[str, str], marker: str) -> tuple[int, bool]:
    answer = client.get(f"{page}?{urlencode(params)}")
    return answer.status_code, marker in answer.content.decode()


def test_no_address_lookup_or_search_confirms_a_guessed_secret(
    ingest_client: Client, reader_client: Client, steward_client: Client, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, **FAST, "ALLOW_PRIVATE": True}
    event = run_event(
        producer=f"https://ci:{SECRET}@git.example.com/etl",
        job={
            "namespace": "tests",
            "name": f"load password={SECRET}",
            "facets": {"env": {"_producer": "p", "_schemaURL": "s", "password": SECRET}},
        },
    )
    assert post_json(ingest_client, LINEAGE, event).status_code in (200, 201)
    (stored,) = Event.objects.all()
    marker = f"/admin/ingest/event/{stored.pk}/change/"
    subscription = WebhookSubscription.objects.create(
        name="echoing", url=f"http://127.0.0.1:9/hooks/{SECRET}"
    )
    sent = delivery.test_send(subscription)
    echoed = f"Not Found: /hooks/{SECRET}"
    WebhookDelivery.objects.filter(pk=sent.pk).update(response_excerpt=echoed, last_error=echoed)

    guesses = [
        (reader_client, LOG, "response_excerpt__contains", str(sent.pk)),
        (reader_client, LOG, "last_error__regex", str(sent.pk)),
        (reader_client, EVENTS, "payload__icontains", marker),
        (reader_client, EVENTS, "payload__job__facets__env__password", marker),
        (steward_client, EVENTS, "payload_raw__contains", marker),
        (steward_client, EVENTS, "producer__contains", marker),
        (steward_client, EVENTS, "derivation_error__contains", marker),
    ]
    for client, page, lookup, row in guesses:
        for guess in (SECRET, "wrong"):
            assert listed(client, page, {lookup: guess}, row) == (400, False), (lookup, guess)
    for term in (event["producer"], event["job"]["name"]):
        for guess in (term, term.replace(SECRET, "wrong")):
            assert listed(reader_client, EVENTS, {"q": guess}, marker) == (200, False), guess
    # What the pages offer still filters and finds.
    assert listed(reader_client, EVENTS, {"derivation_status__exact": "pending"}, marker) == (
        200,
        True,
    )
    assert listed(reader_client, EVENTS, {"kind__exact": stored.kind}, marker)[1]
    assert reader_client.get("/admin/catalog/run/", {"state": "FAIL"}).status_code == 200
    assert listed(reader_client, EVENTS, {"id": str(stored.pk)}, marker)[1]
    assert listed(reader_client, EVENTS, {"q": f"#{stored.pk}"}, marker)[1]
    assert listed(reader_client, EVENTS, {"q": stored.run_id}, marker)[1]
    assert listed(reader_client, LOG, {"subscription__id__exact": str(subscription.pk)}, "echo")[1]
    assert listed(reader_client, LOG, {"kind__exact": "ping"}, str(sent.pk))[1]


def test_every_big_table_refuses_text_lookups_from_the_address(super_client: Client) -> None:
    """Every changelist on ``BoundedAdmin`` (its text columns, its filters), from the
    admin's registry, so a page added later is covered."""
    checked = 0
    for model, model_admin in admin.site._registry.items():
        if not isinstance(model_admin, BoundedAdmin):
            continue
        page = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        offered = model_admin._filter_parameters(None)
        for field in model._meta.concrete_fields:
            if not isinstance(field, TEXT_FIELDS) or field.is_relation or field.choices:
                continue
            for lookup in (f"{field.name}__icontains", f"{field.name}__startswith"):
                answer = super_client.get(page, {lookup: "x"})
                assert answer.status_code == 400, (page, lookup)
                checked += 1
            if field.name not in offered:
                assert super_client.get(page, {field.name: "x"}).status_code == 400, page
    assert checked > 40

"""ADR 0178: a secret shown once (a webhook subscription's signing secret, made or rotated;
an API token made in the admin) is shown on the answer to the action that made it, a page
no cache keeps, and stored nowhere but its own row. It travelled in Django's messages:
their cookie is signed, not encrypted (anyone who sees the cookie reads it), and messages
over the cookie's 2 KB (rotating 20 secrets) were written into the django_session table
until shown."""

import re
import secrets
from typing import Any

import pytest
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.sessions.models import Session
from django.http import HttpResponse
from django.test import Client, RequestFactory

from catalog.admin.webhooks import MAX_AT_ONCE
from catalog.models import WebhookSubscription
from ingest.models import ApiToken
from ingest.services import hash_token

pytestmark = pytest.mark.django_db
SUBSCRIPTIONS = "/admin/catalog/webhooksubscription/"


def kept_elsewhere(response: HttpResponse, wanted: list[str]) -> list[str]:
    """The secrets found in a cookie the answer sets (the message cookie decoded as Django
    reads it) or in any row of django_session (decoded too)."""
    stored = []
    for morsel in response.cookies.values():
        stored.append(morsel.value)
        if morsel.key == CookieStorage.cookie_name and morsel.value:
            messages = CookieStorage(RequestFactory().get("/"))._decode(morsel.value) or []
            stored.extend(str(message) for message in messages)
    for session in Session.objects.all():
        stored += [session.session_data, repr(session.get_decoded())]
    return [secret for secret in wanted if any(secret in text for text in stored)]


def assert_a_page_no_cache_keeps(response: HttpResponse) -> str:
    assert response.status_code == 200, response.status_code
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    return response.content.decode()


def test_rotating_twenty_secrets_shows_each_once_and_stores_none_elsewhere(
    steward_client: Client,
) -> None:
    # Names as long as a name may be (200): in messages, 6 of the 20 secrets went into the
    # cookie and 14 into django_session; with names of a dozen characters, all 20 into the
    # cookie (1,286 bytes, compressed).
    subscriptions = [
        WebhookSubscription.objects.create(
            name=f"{n:02} " + secrets.token_urlsafe(150)[:197], url=f"https://h{n}.example/"
        )
        for n in range(MAX_AT_ONCE)
    ]
    response = steward_client.post(
        SUBSCRIPTIONS,
        {"action": "rotate_secret", "_selected_action": [s.pk for s in subscriptions]},
    )
    rotated = list(WebhookSubscription.objects.values_list("secret", flat=True))
    assert len(set(rotated)) == MAX_AT_ONCE
    assert not {s.secret for s in subscriptions} & set(rotated)  # all rotated
    assert kept_elsewhere(response, rotated) == []
    page = assert_a_page_no_cache_keeps(response)
    assert [page.count(secret) for secret in rotated] == [1] * MAX_AT_ONCE
    later = steward_client.get(SUBSCRIPTIONS)  # the next page shows none of them again
    assert later.status_code == 200
    assert not [secret for secret in rotated if secret in later.content.decode()]
    assert kept_elsewhere(later, rotated) == []


def test_a_new_subscriptions_secret_is_shown_once_and_stored_nowhere_else(
    steward_client: Client, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True}
    form = {"name": "orders", "url": "http://127.0.0.1:8080/hook", "downstream_depth": "5"}
    response = steward_client.post(f"{SUBSCRIPTIONS}add/", {**form, "active": "on"})
    secret = WebhookSubscription.objects.get().secret
    assert kept_elsewhere(response, [secret]) == []
    page = assert_a_page_no_cache_keeps(response)
    assert page.count(secret) == 1
    assert secret not in steward_client.get(SUBSCRIPTIONS).content.decode()


def test_a_token_made_in_the_admin_is_shown_once_and_stored_only_as_its_hash(
    super_client: Client,
) -> None:
    response = super_client.post(
        "/admin/ingest/apitoken/add/", {"name": "airflow", "scope": "read"}
    )
    page = assert_a_page_no_cache_keeps(response)
    (secret,) = set(re.findall(r"lc_read_[A-Za-z0-9_-]{43}", page))
    assert page.count(secret) == 1
    assert ApiToken.objects.get().key_hash == hash_token(secret)
    assert kept_elsewhere(response, [secret]) == []
    assert secret not in super_client.get("/admin/ingest/apitoken/").content.decode()

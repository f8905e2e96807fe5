"""ADR 0178: two stewards add subscriptions of the same name at the same moment. The name is
unique; the form checked it (and found none) for both before either inserted, and the
second insert, waiting for the first's transaction, failed on the constraint: a 500. It is
the form's own error now, as when the name was taken before, and one subscription stays."""

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from catalog.admin.webhooks import WebhookSubscriptionAdmin
from catalog.models import WebhookSubscription

ADD = "/admin/catalog/webhooksubscription/add/"
TAKEN = "Webhook subscription with this Name already exists."


@pytest.mark.django_db(transaction=True)
def test_two_stewards_adding_one_name_at_once_get_one_subscription_and_a_form_error(
    steward: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True}
    both_checked = threading.Barrier(2, timeout=60)
    waited: set[int] = set()
    save = WebhookSubscriptionAdmin.save_model

    def save_once_both_checked(self: Any, request: Any, obj: Any, form: Any, change: bool) -> None:
        # Each steward's form has found the name free; then both insert.
        if threading.get_ident() not in waited:
            waited.add(threading.get_ident())
            both_checked.wait()
        save(self, request, obj, form, change)

    monkeypatch.setattr(WebhookSubscriptionAdmin, "save_model", save_once_both_checked)
    answers: list[Any] = []
    errors: list[BaseException] = []

    def add(url: str) -> None:
        from django.db import connection

        # Not raised in the test: the test client's exception signal is the process's, so a
        # 500 of one steward's request would be raised in both threads.
        client = Client(raise_request_exception=False)
        client.force_login(steward)
        form = {"name": "orders team", "url": url, "active": "on", "downstream_depth": "5"}
        try:
            answers.append(client.post(ADD, form))
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    stewards = [
        threading.Thread(target=add, args=(f"http://127.0.0.1:{port}/hook",))
        for port in (8080, 8081)
    ]
    for thread in stewards:
        thread.start()
    for thread in stewards:
        thread.join(120)
    assert errors == [] and len(answers) == 2
    assert sorted(answer.status_code for answer in answers) == [200, 200]
    pages = sorted(answer.content.decode() for answer in answers)
    assert sum("shown-once" in page for page in pages) == 1  # the first: its secret
    assert sum(TAKEN in page for page in pages) == 1  # the second: the form, saying why
    assert WebhookSubscription.objects.count() == 1

"""docs/admin.md: a NUL character gets a page saying so on every admin page, never a 500.
The guard read only the address: a form posted with a NUL in a field that no form field
validates (a retirement's reason, read from the POST as it came) or that a form turns into
a JSON list (a webhook's namespaces, datasets, downstream-of) reached PostgreSQL, which
refuses NUL in text and jsonb: a 500, on the retire button, the retire actions and the
subscription form. Now the guard refuses such a form before any view reads it, naming the
field, and nothing is stored (ADR 0173)."""

from typing import Any

import pytest
from django.test import Client

from catalog.models import Dataset, Job, Retirement, WebhookSubscription

pytestmark = pytest.mark.django_db
ADD = "/admin/catalog/webhooksubscription/add/"


def refused(answer: Any, field: str) -> bool:
    page = answer.content.decode()
    return answer.status_code == 400 and f"field “{field}” holds a NUL" in page


def test_a_form_with_a_nul_is_a_page_saying_so_and_stores_nothing(
    catalog: Any, steward_client: Client, settings: Any
) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True}
    steward_client.raise_request_exception = False
    dataset, job = Dataset.objects.order_by("id").first(), Job.objects.order_by("id").first()
    assert dataset is not None and job is not None
    posts = [
        (f"/admin/catalog/dataset/{dataset.pk}/retire/", {"reason": "gone\x00"}, "reason"),
        (f"/admin/catalog/job/{job.pk}/retire/", {"reason": "\x00"}, "reason"),
        *(
            (
                f"/admin/catalog/{kind}/",
                {"action": action, "_selected_action": [pk], "confirm": "yes", "reason": "a\x00b"},
                "reason",
            )
            for kind, pk in (("dataset", dataset.pk), ("job", job.pk))
            for action in ("retire_action", "retire_namespace_action")
        ),
    ]
    subscription = {
        "name": "orders team",
        "url": "http://127.0.0.1:8080/hook",
        "active": "on",
        "namespaces": "",
        "datasets": "",
        "downstream_of": "",
        "downstream_depth": "5",
    }
    for field, value in (
        ("namespaces", "s3://lake\x00"),
        ("datasets", "s3://lake orders\x00"),
        ("downstream_of", "s3://lake\x00 orders"),
    ):
        posts.append((ADD, {**subscription, field: value}, field))
    for url, data, field in posts:
        answer = steward_client.post(url, data)
        assert refused(answer, field), (url, field, answer.status_code)
    assert not Retirement.objects.exists()
    assert not WebhookSubscription.objects.exists()
    # The same forms without the NUL do their work.
    answer = steward_client.post(f"/admin/catalog/dataset/{dataset.pk}/retire/", {"reason": "gone"})
    assert answer.status_code == 302 and Retirement.objects.count() == 1
    added = steward_client.post(ADD, {**subscription, "namespaces": "s3://lake"})
    assert added.status_code == 200 and "shown-once" in added.content.decode()  # ADR 0178
    assert WebhookSubscription.objects.get().namespaces == ["s3://lake"]

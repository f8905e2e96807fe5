"""Retire and restore in the admin (ADR 0078): the list action with a reason, the page's
button, the default lists that hide what is retired, and the retirements' restore action."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from catalog.models import Dataset, Job, RetiredKind, Retirement

pytestmark = pytest.mark.django_db


def test_the_list_action_asks_a_reason_and_the_list_then_hides_it(catalog, steward_client):
    job = Job.objects.get(name="load_orders")
    url = reverse("admin:catalog_job_changelist")
    form = {"action": "retire_action", "_selected_action": [job.pk]}
    asked = steward_client.post(url, form)
    assert asked.status_code == 200 and b"Reason" in asked.content
    done = steward_client.post(url, {**form, "confirm": "yes", "reason": "switched off"})
    assert done.status_code == 302
    row = Retirement.objects.get(kind=RetiredKind.JOB, object_id=job.pk)
    assert (row.retired_by, row.reason) == ("steward", "switched off")
    assert job.name not in steward_client.get(url).content.decode()
    assert job.name in steward_client.get(url, {"retired": "yes"}).content.decode()
    page = steward_client.get(reverse("admin:catalog_job_change", args=[job.pk])).content.decode()
    assert "switched off" in page and "Restore" in page
    assert LogEntry.objects.filter(object_id=str(job.pk)).exists()


def test_the_page_button_retires_then_restores(catalog, steward_client):
    dataset = Dataset.objects.order_by("id").first()
    url = reverse("admin:catalog_dataset_retire", args=[dataset.pk])
    assert b"Reason" in steward_client.get(url).content
    steward_client.post(url, {"reason": "dropped"})
    assert not Dataset.objects.current().filter(pk=dataset.pk).exists()
    steward_client.post(url)
    assert Dataset.objects.current().filter(pk=dataset.pk).exists()


def test_a_namespace_is_retired_from_a_list_and_restored_from_the_retirements(
    catalog, steward_client
):
    job = Job.objects.get(name="load_orders")
    steward_client.post(
        reverse("admin:catalog_job_changelist"),
        {"action": "retire_namespace_action", "_selected_action": [job.pk], "confirm": "yes"},
    )
    assert not Job.objects.current().filter(namespace=job.namespace).exists()
    row = Retirement.objects.get(kind=RetiredKind.NAMESPACE)
    steward_client.post(
        reverse("admin:catalog_retirement_changelist"),
        {"action": "restore_action", "_selected_action": [row.pk]},
    )
    assert not Retirement.objects.active().exists()


def test_a_reader_cannot_retire(catalog, reader_client):
    job = Job.objects.get(name="load_orders")
    reader_client.post(
        reverse("admin:catalog_job_changelist"),
        {"action": "retire_action", "_selected_action": [job.pk], "confirm": "yes"},
    )
    reader_client.post(reverse("admin:catalog_job_retire", args=[job.pk]), {"reason": "x"})
    assert not Retirement.objects.exists()


def test_a_selection_larger_than_an_action_does_is_refused_whole_and_said(steward_client):
    """docs/admin.md: *Retire the selected*, *Retire the whole namespaces of the selected*,
    *Restore*. Each did the first 100 selected and said nothing of the rest (a namespace
    retirement took only the namespaces of the first 100 rows): over the bound nothing is
    done and the page says so; at the bound every one is."""
    from catalog.admin.retirement import MAX_SELECTED

    Dataset.objects.bulk_create(
        Dataset(namespace=f"pg://db{n % 2}", name=f"t{n:03}") for n in range(MAX_SELECTED + 1)
    )
    url = reverse("admin:catalog_dataset_changelist")
    every = list(Dataset.objects.order_by("-id").values_list("pk", flat=True))
    for action in ("retire_action", "retire_namespace_action"):
        form = {"action": action, "_selected_action": every, "confirm": "yes", "reason": "gone"}
        page = steward_client.post(url, form, follow=True).content.decode()
        assert f"Select at most {MAX_SELECTED} at once: nothing was done" in page, action
        assert not Retirement.objects.exists()
    form = {"action": "retire_action", "_selected_action": every[:MAX_SELECTED], "confirm": "yes"}
    steward_client.post(url, {**form, "reason": "gone"})
    assert Retirement.objects.count() == MAX_SELECTED
    steward_client.post(reverse("admin:catalog_dataset_retire", args=[every[-1]]), {"reason": "x"})
    retirements = list(Retirement.objects.values_list("pk", flat=True))
    assert len(retirements) == MAX_SELECTED + 1
    restore = {"action": "restore_action", "_selected_action": retirements}
    page = steward_client.post(
        reverse("admin:catalog_retirement_changelist"), restore, follow=True
    ).content.decode()
    assert f"Select at most {MAX_SELECTED} at once" in page
    assert Retirement.objects.filter(restored_at__isnull=True).count() == MAX_SELECTED + 1

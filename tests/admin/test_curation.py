"""Curation through the admin: rule preview, save and regroup, merges, background re-derive."""

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import timedelta

import pytest
from celery import current_app
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client

from catalog import tasks
from catalog.models import AliasRule, Dataset, DatasetAlias, RederiveJob
from catalog.services import curation, derive, rederive_jobs
from ingest.models import Event
from tests.admin.conftest import START, write_catalog

RULE = {
    "slug": "legacy-orders",
    "description": "legacy loads wrote versioned copies of orders",
    "action": "equate",
    "namespace": "s3://lake",
    "name_pattern": r"raw/(orders)_v\d+",
    "target_namespace": "s3://lake",
    "target_name": r"\1",
    "priority": "100",
    "enabled": "on",
}


@pytest.fixture(scope="module")
def _catalog_once(module_transaction: Callable[[], AbstractContextManager[None]]) -> list[int]:
    # Written once for the module's tests, every one of which curates it (ADR 0210); each
    # test's writes are rolled back to it (ADR 0113).
    with module_transaction():
        return write_catalog()


@pytest.fixture
def catalog(_catalog_once: list[int], db: None) -> list[int]:
    """The conftest's derived catalog, written once for the module; its event ids."""
    return _catalog_once


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    """Run Celery tasks in-process (the background re-derive) for the length of a test."""
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = False


def _dataset_of(name: str) -> int | None:
    return DatasetAlias.objects.get(namespace="s3://lake", name=name).dataset_id


@pytest.mark.django_db
def test_preview_shows_the_regrouping_without_saving(catalog: list[int], steward_client: Client):
    response = steward_client.post("/admin/catalog/aliasrule/add/", {**RULE, "_preview": "1"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="rule-preview-table"' in page
    assert "s3://lake/raw/orders_v1" in page and "s3://lake/raw/orders_v2" in page
    assert "Matches <strong>2</strong>" in page
    assert "<strong>2</strong> would move to another dataset" in page
    assert not AliasRule.objects.exists()  # a preview never saves
    assert _dataset_of("raw/orders_v1") != _dataset_of("orders")


@pytest.mark.django_db
def test_preview_reports_a_bad_pattern(catalog: list[int], steward_client: Client) -> None:
    response = steward_client.post(
        "/admin/catalog/aliasrule/add/", {**RULE, "name_pattern": "raw/(", "_preview": "1"}
    )
    assert "Not a valid regular expression" in response.content.decode()
    assert not AliasRule.objects.exists()


@pytest.mark.django_db
def test_saving_a_rule_regroups_and_is_logged(
    catalog: list[int], steward_client: Client, steward: User, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = steward_client.post("/admin/catalog/aliasrule/add/", RULE)
    assert response.status_code == 302, response.content.decode()[:2000]
    rule = AliasRule.objects.get(slug="legacy-orders")
    assert rule.created_by == steward
    target = _dataset_of("orders")
    assert _dataset_of("raw/orders_v1") == target
    assert _dataset_of("raw/orders_v2") == target
    assert LogEntry.objects.filter(user=steward, object_id=str(rule.pk)).exists()


@pytest.mark.django_db
def test_a_rule_matching_more_aliases_than_a_job_holds_regroups_them_all(
    catalog: list[int],
    steward: User,
    eager_tasks: None,
    django_capture_on_commit_callbacks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the events re-derived in the request, the rule's events go to background jobs
    of at most MAX_SELECTED_EVENTS each (both bounds 1 here, for the rule's two aliases):
    every matched alias is regrouped, none left out until a full rederive."""
    monkeypatch.setattr(curation, "APPLY_INLINE_LIMIT", 1)
    monkeypatch.setattr(curation, "MAX_SELECTED_EVENTS", 1)
    monkeypatch.setattr(rederive_jobs, "MAX_SELECTED_EVENTS", 1)
    fields = {key: value for key, value in RULE.items() if key != "enabled"}
    rule = AliasRule.objects.create(**fields, enabled=True, created_by=steward)
    with django_capture_on_commit_callbacks(execute=True):
        events, job_id = curation.apply_rule(rule, steward)
    target = _dataset_of("orders")
    assert _dataset_of("raw/orders_v1") == target
    assert _dataset_of("raw/orders_v2") == target
    assert events == 2 and job_id is not None
    assert sorted(RederiveJob.objects.values_list("state", "total")) == [("done", 1)] * 2


@pytest.mark.django_db
def test_disabling_a_rule_is_an_action_and_logged(
    catalog: list[int], steward_client: Client, steward: User
) -> None:
    rule = AliasRule.objects.create(slug="r", namespace="s3://lake", target_namespace="s3://x")
    response = steward_client.post(
        "/admin/catalog/aliasrule/",
        {"action": "disable_rules", "_selected_action": [rule.pk]},
    )
    assert response.status_code == 302
    rule.refresh_from_db()
    assert not rule.enabled
    assert LogEntry.objects.filter(user=steward, object_id=str(rule.pk)).exists()


@pytest.mark.django_db
def test_merge_two_datasets_is_a_steward_rule_that_rederive_keeps(
    catalog: list[int], steward_client: Client, steward: User, django_capture_on_commit_callbacks
) -> None:
    first = Dataset.objects.get(name="raw/orders_v1")
    second = Dataset.objects.get(name="orders_report")
    post = {"action": "merge_action", "_selected_action": [first.pk, second.pk]}
    confirm = steward_client.post("/admin/catalog/dataset/", post)
    assert "Keep which name?" in confirm.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = steward_client.post(
            "/admin/catalog/dataset/", {**post, "confirm": "yes", "survivor": second.pk}
        )
    assert response.status_code == 302
    assert _dataset_of("raw/orders_v1") == _dataset_of("orders_report")
    rule = AliasRule.objects.get(created_by=steward)
    assert rule.slug.startswith("steward-merge-")
    assert LogEntry.objects.filter(user=steward, change_message__contains="merged").exists()

    # A full rederive empties every derived table and keeps the steward's rule.
    derive.rederive()
    assert _dataset_of("raw/orders_v1") == _dataset_of("orders_report")


@pytest.mark.django_db
def test_rederive_selected_events_runs_in_background_with_progress(
    catalog: list[int],
    steward_client: Client,
    steward: User,
    eager_tasks: None,
    django_capture_on_commit_callbacks,
) -> None:
    ids = catalog[:3]
    with django_capture_on_commit_callbacks(execute=True):
        response = steward_client.post(
            "/admin/ingest/event/", {"action": "rederive_selected", "_selected_action": ids}
        )
    assert response.status_code == 302
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    job = RederiveJob.objects.get(pk=job_id)
    assert (job.state, job.derived, job.total) == ("done", 3, 3)
    page = steward_client.get(response["Location"]).content.decode()
    assert 'id="rederive-state">done<' in page
    assert job.requested_by == steward and job.description == "re-derive 3 event(s)"
    # The admin log records who asked for it.
    entry = LogEntry.objects.get(object_id=str(job_id), content_type__model="rederivejob")
    assert entry.user == steward
    assert set(Event.objects.values_list("derivation_status", flat=True)) == {"derived"}


@pytest.mark.django_db
def test_selecting_more_events_than_the_bound_rederives_nothing_and_says_what_to_use(
    catalog: list[int], steward_client: Client, monkeypatch
) -> None:
    """docs/admin.md: select up to 10,000 events (here the bound is lowered to the catalog's
    size less one); every event selected across pages, one more than that, schedules
    nothing and points at *re-derive since*; the bound itself is accepted."""
    monkeypatch.setattr(rederive_jobs, "MAX_SELECTED_EVENTS", len(catalog) - 1)
    everything = {"action": "rederive_selected", "select_across": "1", "index": "0"}
    refused = steward_client.post(
        "/admin/ingest/event/", {**everything, "_selected_action": catalog[:1]}, follow=True
    )
    assert "use “re-derive since”" in refused.content.decode()
    assert not RederiveJob.objects.exists()
    accepted = steward_client.post(
        "/admin/ingest/event/",
        {"action": "rederive_selected", "_selected_action": catalog[:-1]},
    )
    assert accepted.status_code == 302
    assert RederiveJob.objects.get().total == len(catalog) - 1


@pytest.mark.django_db
def test_rederive_since_a_time(
    catalog: list[int],
    steward_client: Client,
    eager_tasks: None,
    django_capture_on_commit_callbacks,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = steward_client.post(
            "/admin/ingest/event/rederive/",
            {"since": f"{START + timedelta(minutes=4):%Y-%m-%d %H:%M}"},
        )
    assert response.status_code == 302
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    job = rederive_jobs.wait_for(job_id, timeout=5)
    assert job.state == "done"
    assert job.derived >= 1
    listing = steward_client.get("/admin/ingest/event/rederive/").content.decode()
    assert f"/admin/ingest/event/rederive/{job_id}/" in listing


@pytest.mark.django_db
def test_rederive_task_runs_twice_safely(catalog: list[int], steward: User) -> None:
    job_id = rederive_jobs.schedule_rederive(steward, event_ids=catalog[:2])
    tasks.rederive_job(job_id)
    tasks.rederive_job(job_id)
    assert RederiveJob.objects.get(pk=job_id).state == "done"
    assert Dataset.objects.filter(name="lake.orders").count() == 1

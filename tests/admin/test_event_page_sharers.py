"""The event page's "runId also sent by another job" (ADR 0028, ADR 0202): the other jobs'
runs found as ``/events/{id}`` finds them (``Run.objects.named``), so a text runId's
sharers are listed (looked up by the run's own run_uuid, which is its job's alone, it
listed none), at most ``SHARERS_SHOWN`` of them, and none once retention removed the
only other one."""

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from catalog.admin.events import SHARERS_SHOWN
from catalog.admin.support import RELATED_LIMIT
from catalog.models import Run
from catalog.services.derive import derive_events
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.conftest import run_event
from tests.catalog.helpers import openlineage, store

pytestmark = pytest.mark.django_db

TEXT = "scheduled__2026-01-01T00:00:00+00:00"
UUID = "0b1f3c1e-6a8e-4c7b-9d7e-2f1a3b4c5d6e"


def _derive(run_id: str, jobs: list[str]) -> None:
    events = [openlineage(run_event("COMPLETE", 1, run_id, job=("ns", job))) for job in jobs]
    derive_events(store(events))


def _page(client: Client, job: str) -> str:
    event = Event.objects.get(job_name=job)
    return client.get(f"/admin/ingest/event/{event.pk}/change/").content.decode()


def _runs_linked(page: str) -> set[int]:
    return {int(pk) for pk in re.findall(r"/admin/catalog/run/(\d+)/change/", page)}


def _run(job: str) -> Any:
    return Run.objects.get(job__name=job)


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_the_other_jobs_run_of_the_run_id_is_listed(run_id: str, super_client: Client) -> None:
    _derive(run_id, ["first", "second"])
    page = _page(super_client, "first")
    assert "runId also sent by another job" in page
    assert _runs_linked(page) == {_run("first").pk, _run("second").pk}
    assert f"/admin/catalog/job/{_run('second').job_id}/change/" in page


def test_none_is_listed_once_retention_removed_the_other(super_client: Client) -> None:
    _derive(TEXT, ["first", "second"])
    with connection.cursor() as cursor:  # "second" as retention finds it 40 days on
        cursor.execute(
            "UPDATE ingest_event SET received_at = received_at - interval '40 days'"
            " WHERE job_name = 'second'"
        )
        cursor.execute(
            "UPDATE catalog_run SET updated_at = updated_at - interval '40 days' WHERE id = %s",
            [_run("second").pk],
        )
    apply_retention(30)
    page = _page(super_client, "first")
    assert "runId also sent by another job" not in page
    assert _runs_linked(page) == {_run("first").pk}


@pytest.mark.parametrize("run_id", [TEXT, UUID])
def test_the_run_page_lists_the_other_jobs_run_of_the_run_id(
    run_id: str, super_client: Client
) -> None:
    """The run page's "other jobs' runs with this runId" finds them as the event page does:
    by the run's own run_uuid it listed none of a text runId's."""
    _derive(run_id, ["first", "second"])
    page = super_client.get(f"/admin/catalog/run/{_run('first').pk}/change/").content.decode()
    assert _runs_linked(page) >= {_run("second").pk}
    assert "none: this job alone sent this runId" not in page


def test_the_run_page_of_a_run_id_many_jobs_sent_reads_a_bounded_few(super_client: Client) -> None:
    jobs = [f"dag_{number:02}" for number in range(SHARERS_SHOWN + 5)]
    _derive(TEXT, jobs)
    page = super_client.get(f"/admin/catalog/run/{_run(jobs[0]).pk}/change/").content.decode()
    others = _runs_linked(page) - {_run(jobs[0]).pk}
    assert len(others) == RELATED_LIMIT
    # Among the text's first runs, which is all ``named`` reads (the run itself one of them).
    first = Run.objects.filter(job__name__in=jobs).order_by("id")[: RELATED_LIMIT + 2]
    assert others <= {run.pk for run in first}


def test_a_text_run_id_of_many_jobs_shows_a_bounded_few(super_client: Client) -> None:
    jobs = [f"dag_{number:02}" for number in range(SHARERS_SHOWN + 5)]
    _derive(TEXT, jobs)
    page = _page(super_client, jobs[0])
    others = _runs_linked(page) - {_run(jobs[0]).pk}
    assert len(others) == SHARERS_SHOWN
    assert f"first {SHARERS_SHOWN + 2} runs were read" in page

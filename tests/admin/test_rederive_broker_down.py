"""A re-derive asked for while the broker (Redis) is down (docs/admin.md, "Re-deriving
events"): the steward's request is answered at once, the job's row says *not queued* with
the broker's error, the admin log keeps the request, no event is touched, and the progress
page says what happened and what to do instead of refreshing forever. The broker is a real
Redis the test starts and stops (tests/faults/processes.py), so the publish meets what a
stopped Redis answers, not a stand-in."""

import time
from collections.abc import Iterator

import pytest
from celery import current_app
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.test import Client

from catalog.models import RederiveJob
from catalog.services import rederive_jobs
from ingest.models import DerivationStatus, Event
from tests.faults.processes import private_redis

# A steward's request publishes once, with no retry (CELERY_TASK_PUBLISH_RETRY): a refused
# connection is answered in milliseconds; this leaves room for a loaded machine.
ANSWERED_WITHIN = 3.0


def _forget_broker_connections() -> None:
    # Celery caches connections in two pools; both remember the broker address.
    current_app._pool = None
    current_app.amqp._producer_pool = None


@pytest.fixture(scope="module")
def stopped_redis_url() -> str:
    """The address of a Redis that ran and was stopped: nothing listens there now."""
    with private_redis() as redis:
        url = redis.url
    return url


@pytest.fixture
def broker_stopped(stopped_redis_url: str) -> Iterator[None]:
    original, eager = current_app.conf.broker_url, current_app.conf.task_always_eager
    current_app.conf.broker_url = stopped_redis_url
    current_app.conf.task_always_eager = False  # published to the broker, as in production
    _forget_broker_connections()
    yield
    current_app.conf.broker_url, current_app.conf.task_always_eager = original, eager
    _forget_broker_connections()


def _statuses(ids: list[int]) -> list[str]:
    return list(Event.objects.filter(id__in=ids).values_list("derivation_status", flat=True))


@pytest.mark.django_db
def test_a_rederive_scheduled_while_the_broker_is_down_is_kept_not_queued(
    catalog: list[int], steward: User, broker_stopped: None, django_capture_on_commit_callbacks
) -> None:
    ids = catalog[:3]
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        job_id = rederive_jobs.schedule_rederive(steward, event_ids=ids, reason="broker down")
    took = time.monotonic() - started
    assert took < ANSWERED_WITHIN, f"a broker outage held the steward's request {took:.1f} s"
    job = RederiveJob.objects.get(pk=job_id)
    assert job.state == "not_queued"
    assert job.error  # the broker's own words, for the operator
    assert (job.event_ids, job.total, job.reason) == (sorted(ids), 3, "broker down")
    assert job.finished  # nothing will ever run it: waiting for it ends at once
    assert rederive_jobs.wait_for(job_id, timeout=5).state == "not_queued"
    entry = LogEntry.objects.get(object_id=str(job_id))
    assert entry.user_id == steward.pk
    assert _statuses(ids) == [DerivationStatus.DERIVED] * 3  # no event reset and left


@pytest.mark.django_db
def test_the_admin_action_while_the_broker_is_down_tells_the_steward(
    catalog: list[int],
    steward_client: Client,
    broker_stopped: None,
    django_capture_on_commit_callbacks,
) -> None:
    ids = catalog[:2]
    with django_capture_on_commit_callbacks(execute=True):
        response = steward_client.post(
            "/admin/ingest/event/", {"action": "rederive_selected", "_selected_action": ids}
        )
    assert response.status_code == 302
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    job = RederiveJob.objects.get(pk=job_id)
    assert (job.state, job.event_ids) == ("not_queued", sorted(ids))
    assert LogEntry.objects.filter(object_id=str(job_id)).count() == 1
    page = steward_client.get(response["Location"])
    assert page.status_code == 200
    text = page.content.decode()
    assert 'id="rederive-state">not queued (broker unavailable)<' in text
    assert "Nothing was re-derived" in text and "ask again" in text
    assert 'http-equiv="refresh"' not in text  # nothing will change: no endless refresh
    assert _statuses(ids) == [DerivationStatus.DERIVED] * 2

"""`make test` runs pytest on several xdist workers (ADR 0075): each worker gets a Redis
database of its own, as pytest-django gives it a PostgreSQL test database of its own, so
one worker's queued tasks and waiting-task marker are never seen by another."""

import os

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.settings.test import worker_redis_url


def test_the_first_worker_keeps_the_database_and_each_next_takes_the_one_below() -> None:
    url = "redis://127.0.0.1:6379/15"
    assert worker_redis_url(url, "gw0") == url
    assert worker_redis_url(url, "gw1") == "redis://127.0.0.1:6379/14"
    assert worker_redis_url("redis://:pw@host:6380/6", "gw3") == "redis://:pw@host:6380/3"


@pytest.mark.parametrize("worker", [None, "", "master"])
def test_outside_a_worker_the_url_is_used_as_it_is(worker: str | None) -> None:
    assert worker_redis_url("redis://127.0.0.1:6379/15", worker) == "redis://127.0.0.1:6379/15"


def test_more_workers_than_databases_below_is_a_clear_error() -> None:
    with pytest.raises(ImproperlyConfigured, match="gw2 has no Redis database below db 1"):
        worker_redis_url("redis://127.0.0.1:6379/1", "gw2")
    with pytest.raises(ImproperlyConfigured, match="below db 0"):
        worker_redis_url("redis://127.0.0.1:6379", "gw1")


def test_this_run_uses_its_workers_database_for_the_broker() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    expected = worker_redis_url(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15", worker)
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL == expected

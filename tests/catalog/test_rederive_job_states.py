"""A steward's background re-derive says on its row how it ended
(catalog.services.rederive_jobs.run_rederive_job): "retrying" after a transient database
error, one that lost the connection too (the real PostgreSQL ends it), and "failed", with
why, after any other."""

from typing import Any

import pytest
from django.db import OperationalError, connection

from catalog.models import RederiveJob
from catalog.services import rederive_jobs


def _job() -> int:
    return RederiveJob.objects.create(description="re-derive 1 event(s)", event_ids=[1]).pk


@pytest.mark.django_db(transaction=True)
def test_a_job_whose_connection_is_lost_says_retrying(monkeypatch: pytest.MonkeyPatch) -> None:
    job_id = _job()

    def lose_the_connection(*args: Any, **kwargs: Any) -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setattr(rederive_jobs, "rederive_event_ids", lose_the_connection)
    with pytest.raises(OperationalError):  # raised on: the task retries it
        rederive_jobs.run_rederive_job(job_id)
    connection.close()  # the row read on a connection of its own, whatever became of that one
    assert RederiveJob.objects.get(pk=job_id).state == "retrying"


@pytest.mark.django_db
def test_a_job_that_raises_anything_else_says_failed_and_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job_id = _job()

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise ValueError("not a rule")

    monkeypatch.setattr(rederive_jobs, "rederive_event_ids", refuse)
    with pytest.raises(ValueError):
        rederive_jobs.run_rederive_job(job_id)
    job = RederiveJob.objects.get(pk=job_id)
    assert (job.state, job.error) == ("failed", "ValueError: not a rule")
    assert job.finished_at is not None

"""Equality on run_id / job_name / producer goes through the btree on md5 (ADR 0025)."""

import pytest
from django.db import connection

from ingest.models import Event
from ingest.services import record_events
from ingest.validation import validate_openlineage
from tests.ingest.helpers import run_event

pytestmark = pytest.mark.django_db

LONG = "https://example.com/" + "producer/" * 500  # far beyond a btree entry's 2,704 bytes


def _store(**overrides: object) -> None:
    record_events([validate_openlineage(run_event(**overrides))])


def test_equality_finds_values_of_any_length_and_only_equal_ones() -> None:
    _store(producer=LONG, job={"namespace": "tests", "name": "j" * 5000})
    _store(producer=LONG + "x")
    _store()
    assert Event.objects.filter(producer=LONG).count() == 1
    assert Event.objects.filter(job_name="j" * 5000).count() == 1
    assert Event.objects.filter(producer="https://example.com/tests").count() == 1
    assert Event.objects.filter(producer="nobody").count() == 0


def test_equality_is_served_by_the_md5_index() -> None:
    for index in range(30):
        _store(producer=f"https://example.com/p{index % 3}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_event")
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = Event.objects.filter(
            producer="https://example.com/p1"
        ).query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "ingest_event_producer_md5" in plan

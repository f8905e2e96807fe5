"""bench/namespaces.py's bare SQL is the same answer as the namespace reads it stands beside
(ADR 0121): the counts of ``/api/v1/namespaces`` and the spans of the Marquez mount's
``/namespaces``, retired jobs and datasets left out."""

import pytest
from django.db import connection

from bench.namespaces import BARE_COUNTS, BARE_SPANS
from catalog.reads.namespaces import namespaces
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.api.conftest import results
from tests.api.factories import at, make_dataset, make_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog() -> None:
    make_job("load", first_seen=at(1), last_seen=at(5))
    gone = make_job("gone", first_seen=at(0), last_seen=at(9))
    make_job("etl", namespace="dagster", first_seen=at(2), last_seen=at(3))
    make_dataset("shop.orders", first_seen=at(4), last_seen=at(6))
    dropped = make_dataset("shop.dropped", first_seen=at(-1), last_seen=at(12))
    make_dataset("events", namespace="kafka://broker:9092", first_seen=at(7), last_seen=at(8))
    retirement.retire(gone, Actor("stew"), "switched off")
    retirement.retire(dropped, Actor("stew"), "dropped")


def bare(sql: str, values: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        return list(cursor.fetchall())


def test_the_bare_counts_are_the_api_answer(read_client, catalog) -> None:
    served = [
        (row["namespace"], row["jobs"], row["datasets"])
        for row in results(read_client.get("/api/v1/namespaces"))
    ]
    assert bare(BARE_COUNTS, {"limit": 50}) == served
    assert served == [
        ("airflow", 1, 0),
        ("dagster", 1, 0),
        ("kafka://broker:9092", 0, 1),
        ("postgres://db:5432", 0, 1),
    ]
    assert bare(BARE_COUNTS, {"limit": 1}) == served[:1]


def test_the_bare_spans_are_the_marquez_read(catalog) -> None:
    read = [(n.name, n.created, n.updated) for n in namespaces()]
    assert bare(BARE_SPANS, {}) == read
    assert read[0] == ("airflow", at(1), at(5))  # the retired job's span is left out
    assert read[-1] == ("postgres://db:5432", at(4), at(6))

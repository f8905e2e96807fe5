"""An unfiltered run page's statement (its items written by PostgreSQL, ADR 0130) is
prepared on a kept connection, once per page shape, with a generic plan that reads the
primary key from the position as the custom plans do."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client

from api.views import catalog as views
from tests.api.factories import T0, make_job, make_run

pytestmark = pytest.mark.django_db(transaction=True)

_TEXT = '"run_id_as_sent":'


@pytest.fixture
def client(fresh_connection: None, read_client: Client) -> Client:
    job = make_job("load")
    for hour in range(5):
        make_run(job, started=T0 + timedelta(hours=hour))
    return read_client


def _prepared() -> list[tuple[str, int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            [f"%{_TEXT}%"],
        )
        return cursor.fetchall()


def test_a_page_shape_is_prepared_once_and_served_by_a_generic_plan(client: Client) -> None:
    first = client.get("/api/v1/runs?limit=2")
    next_link = first.json()["next"]
    pages = [client.get(next_link).content for _ in range(7)]
    assert len(set(pages)) == 1
    prepared = _prepared()
    # Two shapes: the first page (no position) and the next one, the latter 7 times.
    assert sorted(generic + custom for _, generic, custom in prepared) == [1, 7]
    ((deep, generic),) = [(text, g) for text, g, custom in prepared if g + custom == 7]
    assert generic >= 1  # past PostgreSQL's five custom plans, it chose the generic one
    # Whether a five-row table is read by its index or whole depends on the statistics an
    # earlier test may have left (ANALYZE writes them outside its transaction, and the
    # suite's flush truncates only tables that hold rows, tests/flush.py): with sequential
    # scans off, what this asserts is that the generic plan can read the key from the
    # position, as the other plan tests do.
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_generic_plan")
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("PREPARE run_page_generic(bigint) AS " + deep)
        cursor.execute("EXPLAIN EXECUTE run_page_generic(3)")
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE run_page_generic")
        cursor.execute("RESET enable_seqscan")
        cursor.execute("RESET plan_cache_mode")
    assert "Index Scan Backward using catalog_run_pkey on catalog_run" in plan, plan


def test_the_setting_turns_it_off(client: Client, settings) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    body = client.get("/api/v1/runs?limit=2").content
    assert _prepared() == []
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": True}
    assert client.get("/api/v1/runs?limit=2").content == body
    assert len(_prepared()) == 1
    assert views.RUN_PAGES.writer is not None

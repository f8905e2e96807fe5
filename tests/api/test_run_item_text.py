"""An unfiltered run page's items written by PostgreSQL (api.run_item_text, ADR 0130) are
the bytes ``run_item``'s dicts render to, for every column's edges, in both DateStyles,
compact and indented."""

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from api import run_item_text
from api.keyset_rows import KeysetRows
from api.list_rows import run_item
from api.views import catalog as views
from catalog.models import Run
from core.rendering import JSONRenderer, RawJSON
from tests.api.factories import T0, make_job, make_run

_ODD = 'q"uo\\te\n\t\x01\x1f é \u2028 \U0001f600 </script>'


@pytest.fixture
def runs() -> list[Run]:
    """Runs whose columns reach every edge the text is written at."""
    plain, odd = make_job("load"), make_job(_ODD, namespace="ns/" + _ODD)
    made = []
    fractions = [0, 1, 10, 120_000, 123_456, 999_999, 100_000]
    for index, microsecond in enumerate(fractions):
        started = T0 + timedelta(hours=index, microseconds=microsecond)
        made.append(make_run(odd if index % 2 else plain, started=started))
    first, second, third, fourth, fifth, sixth, seventh = made
    first.ended_at = first.started_at + timedelta(minutes=3)
    first.duration = first.ended_at - first.started_at
    first.tags = [
        {"key": "team", "value": "core", "source": "steward"},
        {"key": "pii", "value": "yes", "hidden": True},
        {"key": "n", "value": 1.5e-07, "extra": [1, 2]},
        {"value": "no key"},
    ]
    second.duration = timedelta(days=400, seconds=3, microseconds=7)
    second.state_time = datetime(1999, 12, 31, 23, 59, 59, 1, tzinfo=UTC)
    second.nominal_start_time = datetime(2026, 1, 1, tzinfo=UTC)
    second.nominal_end_time = datetime(2026, 1, 1, 0, 0, 0, 500_000, tzinfo=UTC)
    second.error_message = _ODD
    second.is_streaming = True
    second.lineage_edges_cut = 2**40
    third.duration = timedelta(microseconds=1)
    third.tags = {"not": "a list"}
    third.first_event_time = None
    third.last_event_time = None
    fourth.tags = [{"key": "only", "hidden": False}]
    fourth.duration = timedelta(seconds=0.1)
    fifth.parent_run = first
    fifth.shares_run_id = True
    for run in made:
        run.save()
    Run.objects.filter(id=sixth.id).update(run_id_text="manual__2026 password=hunter2")
    Run.objects.filter(id=seventh.id).update(run_id_text=_ODD, is_placeholder=True)
    return made


def _rendered(items: list[Any], indent: bool = False) -> bytes:
    media = "application/json; indent=2" if indent else "application/json"
    return JSONRenderer().render(items, media, {})


def _written(ordering: tuple[str, ...]) -> list[Any]:
    rows = KeysetRows(views.RUN_ROWS, run_item_text).shape().order_by(*ordering)[0:51]
    assert [row["id"] for row in rows] == sorted(
        (row["id"] for row in rows), reverse=ordering[0].startswith("-")
    )
    return [row["item"] for row in rows]


def _both(ordering: tuple[str, ...] = ("-id",)) -> tuple[list[Any], list[Any]]:
    written = _written(ordering)
    rows = list(views.RUN_ROWS.order_by(*ordering)[0:51])
    return written, [run_item(row) for row in rows]


@pytest.mark.django_db
@pytest.mark.parametrize("date_style", ["ISO, MDY", "SQL, DMY", "German", "Postgres, YMD"])
@pytest.mark.parametrize("ordering", [("-id",), ("id",)])
def test_written_items_are_run_items_bytes(
    runs: list[Run], date_style: str, ordering: tuple[str, ...]
) -> None:
    """psycopg reads timestamps in an ISO session only, so the ORM's items are read in one
    and the written ones in each DateStyle."""
    expected = _both(ordering)[1]
    with connection.cursor() as cursor:
        cursor.execute(f"SET DateStyle = '{date_style}'")
    try:
        written = _written(ordering)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET DateStyle")
    assert len(written) == len(runs)
    for item, dict_item in zip(written, expected, strict=True):
        assert _rendered([item]) == _rendered([dict_item]), dict_item
    assert _rendered(written) == _rendered(expected)
    assert _rendered(written, indent=True) == _rendered(expected, indent=True)
    # Runs with tags other than [] are dicts (their tags set in Python); the rest text.
    kinds = [isinstance(raw, RawJSON) for raw in written]
    assert sorted(kinds) == [False, False, False, True, True, True, True]


@pytest.mark.django_db
def test_a_secret_in_a_runid_is_redacted_in_the_text(runs: list[Run]) -> None:
    written, _ = _both()
    texts = b"".join(_rendered([item]) for item in written)
    assert b"hunter2" not in texts
    assert b'"run_id_as_sent":"manual__2026 password=***REDACTED***"' in texts


@pytest.mark.django_db
def test_pages_served_are_the_orms_pages(
    api: Client, runs: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Walked with two runs a page, then with a byte budget that cuts pages: the same bytes
    as the run list built from the ORM's rows (``RUN_PAGES`` off)."""

    def walk() -> list[bytes]:
        bodies, url = [], "/api/v1/runs?limit=3"
        while url:
            response = api.get(url)
            assert response.status_code == 200, response.content
            bodies.append(response.content)
            url = response.json()["next"]
        return bodies

    def cut() -> bytes:
        return api.get("/api/v1/runs?limit=7").content

    sizes = [len(orjson.dumps(item)) for item in _both()[1]]
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", sum(sizes[:3]) + 1)
    kept = walk(), cut()
    monkeypatch.setattr(views, "RUN_PAGES", None)
    assert (walk(), cut()) == kept
    assert len(orjson.loads(kept[1])["results"]) == 3  # cut by the budget


def test_the_statement_keeps_the_pages_order() -> None:
    sql = run_item_text.statement("SELECT 1", ("-id", "job_id"), iso=True)
    assert sql.endswith(' FROM (SELECT 1) AS q ORDER BY q."id" DESC, q."job_id" ASC')
    assert "%" not in run_item_text.statement("", ("id",), iso=False)  # no psycopg format


@pytest.mark.django_db
def test_a_whole_second_is_written_without_a_fraction(runs: list[Run]) -> None:
    texts = [_rendered([item]) for item in _both()[0]]
    assert any(b'"started_at":"2026-11-01T00:00:00Z"' in text for text in texts)
    assert any(b'"started_at":"2026-11-01T06:00:00.100000Z"' in text for text in texts)

"""The event list's filters with no index in its order read at most a scan's rows (ADR 0194).

``/api/v1/events?event_type=FAIL`` (``kind``, ``job_namespace``, ``derivation_status=derived``
and the others ``api.event_scan`` names) walked the primary key back from the newest event
until a page of matches was found: with few or no such events, the whole log. Now a request
reads at most ``SCAN_ROWS`` events from its cursor (set small here), its page may be short
or empty while ``next`` continues from the last event read, and following ``next`` gives
every match once, in order. The log is built with SQL: many events, few matches among them.
"""

import base64
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api import event_scan
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

SCAN = 40
EVENTS = 600

# %(count)s events: every %(every)s-th a FAIL of job "rare-job" (the first of them at
# %(first)s), the others COMPLETE of job "common"; job namespace as their type.
_LOG = """
INSERT INTO ingest_event (kind, event_type, event_time, run_id, job_namespace, job_name,
    producer, payload, digest, derivation_status)
SELECT 'run', CASE WHEN i %% %(every)s = %(first)s THEN 'FAIL' ELSE 'COMPLETE' END,
    '2026-01-01T00:00:00Z'::timestamptz + i * interval '1 second', md5('run' || i), 'tests',
    CASE WHEN i %% %(every)s = %(first)s THEN 'rare-job' ELSE 'common' END,
    'https://tests/producer', jsonb_build_object('n', i),
    sha256(convert_to(%(tag)s || ':' || i, 'UTF8')),
    CASE WHEN i %% 2 = 0 THEN 'pending' ELSE 'derived' END
FROM generate_series(1, %(count)s) AS i
"""


def _log(count: int = EVENTS, every: int = 97, first: int = 5, tag: str = "log") -> None:
    with connection.cursor() as cursor:
        cursor.execute(_LOG, {"count": count, "every": every, "first": first, "tag": tag})
        cursor.execute("ANALYZE ingest_event")


def _fails() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM ingest_event WHERE event_type = 'FAIL' ORDER BY id DESC")
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture(autouse=True)
def small_scan(monkeypatch: Any) -> None:
    monkeypatch.setattr(event_scan, "SCAN_ROWS", SCAN)


def _get(api: Any, path: str) -> dict[str, Any]:
    response = api.get(path, RAW_URI=path)
    assert response.status_code == 200, response.content
    return response.json()


def _relative(link: str | None) -> str:
    return link[link.index("/api/v1/") :] if link else ""


def _statements(api: Any, path: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        assert api.get(path, RAW_URI=path).status_code == 200
    return [q["sql"] for q in captured.captured_queries if "ingest_event" in q["sql"]]


def _pages(api: Any, path: str, link: str = "next") -> list[dict[str, Any]]:
    pages = []
    while path:
        body = _get(api, path)
        pages.append(body)
        path = _relative(body[link])
    return pages


def test_a_value_no_event_holds_reads_at_most_the_scan(api) -> None:
    """``?event_type=ABORT``: no event has it. One statement, reading the scan's rows of the
    primary key (and one more, to know there are more) and the last two again by their key,
    not the 600 (before: all of them)."""
    _log()
    path = "/api/v1/events?event_type=ABORT&limit=5"
    (sql,) = _statements(api, path)
    read = rows_read(sql, "ingest_event")
    assert sum(read.values()) <= SCAN + 2 + 2, (read, sql)
    body = _get(api, path)
    assert body["results"] == [] and body["next"]


def test_following_next_gives_every_match_once_in_order(api) -> None:
    """Short and empty pages with a ``next`` until the log's end: the FAILs, newest first,
    each once, none missing, though events (some FAILs) were stored between the pages; every
    page reads at most the scan."""
    _log()
    expected = _fails()
    assert len(expected) == 7
    path = "/api/v1/events?event_type=FAIL&limit=2"
    seen: list[int] = []
    pages = 0
    while path:
        for sql in _statements(api, path):
            assert sum(rows_read(sql, "ingest_event").values()) <= SCAN + 2 + 2 + 2, sql
        body = _get(api, path)
        assert len(body["results"]) <= 2
        seen.extend(event["id"] for event in body["results"])
        pages += 1
        if pages == 2:  # newer events, FAILs among them, after the first page: not listed
            _log(count=50, every=7, first=3, tag="later")
        path = _relative(body["next"])
    assert seen == expected
    assert pages >= EVENTS // SCAN  # the walk went down the whole log, a scan at a time


def test_previous_walks_back_to_the_first_match(api) -> None:
    """From the last page, ``previous`` pages back over every match, in the list's order."""
    _log()
    expected = _fails()
    last = _pages(api, "/api/v1/events?event_type=FAIL&limit=2")[-1]
    back = _pages(api, _relative(last["previous"]), "previous")
    ids = [event["id"] for body in reversed(back) for event in body["results"]]
    ids += [event["id"] for event in last["results"]]
    assert ids == expected


# The first FAIL at i = 0: the first page's scan stops past its one match; at 76: the scan's
# last row (the 40th from the newest, i = 561) is its match, and the next cursor that row.
@pytest.mark.parametrize("first", [0, 76])
def test_an_empty_page_links_back_to_the_match_before_it(api, first: int) -> None:
    """An empty page's ``previous`` starts at its cursor's own event, which the page before
    it read: the match just before is its item, not skipped."""
    _log(every=97, first=first)
    body = _get(api, "/api/v1/events?event_type=FAIL&limit=1")
    shown = [event["id"] for event in body["results"]]
    while body["results"] or not shown:
        body = _get(api, _relative(body["next"]))
        shown.extend(event["id"] for event in body["results"])
    assert body["next"] and body["previous"]  # an empty page inside the walk
    before = [event["id"] for event in _get(api, _relative(body["previous"]))["results"]]
    assert before == shown[-1:]


def test_a_common_value_fills_its_page_from_the_newest(api) -> None:
    """COMPLETE is most events: the page is full at once and reads about the page."""
    _log()
    path = "/api/v1/events?event_type=COMPLETE&limit=10"
    (sql,) = _statements(api, path)
    assert sum(rows_read(sql, "ingest_event").values()) <= 2 * (10 + 5), sql
    ids = [event["id"] for event in _get(api, path)["results"]]
    assert len(ids) == 10 and ids == sorted(ids, reverse=True)


def test_a_rare_job_is_answered_whole_from_its_index(api) -> None:
    """A job of 7 events among 600: the scan stops short, its md5 index is asked and has
    fewer than a scan's rows, so the page holds all of them and ``next`` is null."""
    _log()
    body = _get(api, "/api/v1/events?job_name=rare-job&limit=50")
    assert [event["id"] for event in body["results"]] == _fails()
    assert body["next"] is None
    scan = next(
        sql for sql in _statements(api, "/api/v1/events?job_name=rare-job") if "ROW_NUMBER" in sql
    )
    assert "MD5(" not in scan.upper(), scan  # the walk compares the name, not its md5


def test_a_narrow_time_window_is_read_on_its_index_without_a_scan(api) -> None:
    """3 events in the window: its (event_time, id) index is asked first; no walk."""
    _log()
    path = "/api/v1/events?since=2026-01-01T00:00:01Z&until=2026-01-01T00:00:04Z"
    window = _get(api, path)
    assert len(window["results"]) == 3 and window["next"] is None
    statements = _statements(api, path)
    assert not any("ROW_NUMBER" in sql for sql in statements), statements
    assert all(sum(rows_read(sql, "ingest_event").values()) <= 2 * 3 for sql in statements)


def test_a_scan_walks_the_pending_index_when_named(api) -> None:
    """``derivation_status=pending`` with a type: the walk is the pending partial index."""
    _log()
    (sql,) = _statements(api, "/api/v1/events?derivation_status=pending&event_type=ABORT")
    read = rows_read(sql, "ingest_event")
    assert read.get("ingest_event_pending_idx", 0) <= SCAN + 2 and "ingest_event_pkey" in read


def test_two_ordered_filters_walk_one_index_within_the_scan(api) -> None:
    """Pending and with facet problems (every other event has some): one partial index is
    walked, the other filter is matched, and the walk still stops at the scan."""
    _log()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE ingest_event SET facet_problems = '[]' WHERE id % 4 = 1")
        cursor.execute("ANALYZE ingest_event")
    path = "/api/v1/events?derivation_status=pending&has_facet_problems=true&event_type=ABORT"
    (sql,) = _statements(api, path)
    assert sum(rows_read(sql, "ingest_event").values()) <= SCAN + 2 + 2, sql


def test_a_page_cut_at_its_bytes_continues_after_the_last_item(api, settings) -> None:
    """Matches over the byte budget: the next page starts after the last item kept."""
    _log(every=3, first=0)
    settings.LINEAGE = {**settings.LINEAGE, "MAX_PAGE_BYTES": 1_000}
    pages = _pages(api, "/api/v1/events?event_type=FAIL")
    assert [event["id"] for body in pages for event in body["results"]] == _fails()


def test_unnamed_and_ordered_filters_keep_their_one_statement(api, django_assert_num_queries):
    _log()
    for path in (
        "/api/v1/events",
        "/api/v1/events?derivation_status=pending",
        "/api/v1/events?run_id=x",
    ):
        with django_assert_num_queries(1):
            _get(api, path)
    with django_assert_num_queries(1):  # a full page of a scanned filter: one statement
        assert len(_get(api, "/api/v1/events?event_type=COMPLETE&limit=20")["results"]) == 20


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        base64.b64encode(b"p=abc").decode(),
        base64.b64encode(b"o=3&p=100").decode(),  # an offset: no cursor served has one
        base64.b64encode(b"p=99999999999999999999").decode(),
        base64.b64encode(b"r=1").decode(),
    ],
)
def test_a_forged_cursor_is_a_400_problem(api, cursor: str) -> None:
    _log(count=50)
    response = api.get(f"/api/v1/events?event_type=FAIL&cursor={cursor}")
    assert response.status_code == 400, response.content
    assert response.json()["type"].endswith("invalid-cursor")


def test_previous_then_next_comes_back_to_each_page(api) -> None:
    """Back from any page that shows a match, then forward: the same first match, also when
    the page back came back empty (its next starts at its cursor's own event)."""
    _log(every=53, first=11)
    pages = _pages(api, "/api/v1/events?event_type=FAIL&limit=1")
    checked = 0
    for body in pages:
        if not body["results"] or not body["previous"]:
            continue
        back = _get(api, _relative(body["previous"]))
        again = _get(api, _relative(back["next"]))
        while not again["results"]:
            again = _get(api, _relative(again["next"]))
        assert again["results"][0]["id"] == body["results"][0]["id"]
        checked += 1
    assert checked >= 5

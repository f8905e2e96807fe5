"""The per-event size limit holds on every ingest path and in backfill (which streams
past HTTP's inflation cap, tests/ingest/test_backfill_memory.py); list pages cap their bytes
and their `next` links stay right."""

import gzip
import resource
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.wsgi import get_wsgi_application
from django.test import RequestFactory

from ingest.fastpath import IngestFastPath
from ingest.models import Event
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, run_event
from tests.wsgi_answer import wsgi_answer

pytestmark = pytest.mark.django_db
EVENT_LIMIT = 16 * 1024


@pytest.fixture
def small_events(monkeypatch) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_EVENT_BYTES", EVENT_LIMIT)


def _fast_path(body: bytes, token: str, **extra: Any) -> tuple[int, dict[str, Any]]:
    request = RequestFactory().post(
        LINEAGE,
        data=body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **extra,
    )
    status, _, content = wsgi_answer(IngestFastPath(get_wsgi_application()), request.environ)
    return status, orjson.loads(content)


def _big_event() -> bytes:
    return orjson.dumps(run_event(padding="x" * (2 * EVENT_LIMIT)))


def test_an_event_over_the_limit_is_refused_on_every_path(small_events, ingest_client) -> None:
    big = "x" * (2 * EVENT_LIMIT)
    event = _big_event()
    bodies = [
        (LINEAGE, event, {}),
        (LINEAGE, gzip.compress(event), {"HTTP_CONTENT_ENCODING": "gzip"}),  # 60 MB → 60 KB
        (LINEAGE, b"[" + event + b"]", {}),
        # All or nothing: the small event before the large one is not stored either.
        (LINEAGE, b"[" + orjson.dumps(run_event()) + b"," + event + b"]", {}),
        (
            EDGES,
            b'[{"source_table": "a", "target_table": "b"}, '
            + orjson.dumps({"source_table": "a", "target_table": "c", "note": big})
            + b"]",
            {},
        ),
        (EDGES, orjson.dumps({"source_table": "a", "target_table": "b", "note": big}), {}),
        (
            METADATA,
            orjson.dumps({"subject": "s", "action": "a", "additionalValues": {"v": big}}),
            {},
        ),
    ]
    for url, body, extra in bodies:
        response = ingest_client.post(url, data=body, content_type="application/json", **extra)
        assert response.status_code == 413, (url, response.content[:200])
        assert response.json()["type"] == "urn:lineage-catalog:problem:payload-too-large"
    report = ingest_client.post(BATCH, data=b"[" + event + b"]", content_type="application/json")
    assert report.json()["summary"]["failed"] == 1
    assert not Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_fast_path_refuses_an_event_over_the_limit(small_events, ingest_token) -> None:
    body = gzip.compress(_big_event())
    status, problem = _fast_path(body, ingest_token, HTTP_CONTENT_ENCODING="gzip")
    assert status == 413 and problem["type"].endswith("payload-too-large")
    assert not Event.objects.exists()


def test_backfill_applies_the_event_limit_and_the_inflation_cap(
    small_events, monkeypatch, tmp_path: Path, capsys
) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_DECOMPRESSED_BYTES", 256 * 1024)
    good = [run_event() for _ in range(3)]
    big = orjson.dumps(run_event(padding="x" * (2 * EVENT_LIMIT)))
    (tmp_path / "big.ndjson").write_bytes(b"\n".join([orjson.dumps(good[0]), big]) + b"\n")
    # 100 MB of one line gzipped to ~100 KB: refused a step at a time, never inflated whole.
    bomb = gzip.compress(orjson.dumps(good[1])[:-1] + b',"pad":"' + b"x" * (100 << 20) + b'"}\n', 9)
    (tmp_path / "bomb.ndjson.gz").write_bytes(bomb + gzip.compress(orjson.dumps(good[2]) + b"\n"))
    # Many ordinary lines past the whole-file cap: streamed, all stored.
    lines = [run_event() for _ in range(200)]
    (tmp_path / "many.ndjson.gz").write_bytes(
        gzip.compress(b"\n".join(orjson.dumps(event) for event in lines) + b"\n")
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    call_command("backfill", str(tmp_path), "--state", str(tmp_path / "state.json"))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    output = capsys.readouterr().out
    assert "stored 202, duplicate 0, refused 2" in output, output
    assert f"event larger than {EVENT_LIMIT} bytes" in output
    assert grown_mib < 60, f"backfill grew by {grown_mib:.0f} MiB"


def test_list_pages_cap_their_bytes_and_next_still_walks_every_item(
    monkeypatch, ingest_client, read_client
) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", 100 * 1024)
    for number in range(10):
        event = run_event(padding=f"{number}" * 30_000)
        assert (
            ingest_client.post(
                LINEAGE, data=orjson.dumps(event), content_type="application/json"
            ).status_code
            == 201
        )
    page = read_client.get("/api/v1/events", {"limit": 500}).json()
    assert 1 <= len(page["results"]) <= 4
    ids = [item["id"] for item in page["results"]]
    pages = [page]
    while page["next"]:
        page = read_client.get(page["next"]).json()
        assert len(orjson.dumps(page)) < 100 * 1024 + 40_000  # the budget and one item at most
        pages.append(page)
        ids += [item["id"] for item in page["results"]]
    assert ids == sorted(Event.objects.values_list("id", flat=True), reverse=True)
    back = read_client.get(pages[-1]["previous"]).json()  # a page reached backwards
    assert [item["id"] for item in back["results"]] == [
        item["id"] for item in pages[-2]["results"]
    ][-len(back["results"]) :]
    assert back["next"]


def _resident_mib(field: str) -> float:
    """VmRSS (now) or VmHWM (the peak since the last reset) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} in /proc/self/status")


@pytest.mark.django_db(transaction=True)
def test_the_export_holds_a_bounded_number_of_bytes_at_once(
    monkeypatch, ingest_client, read_client
) -> None:
    """16 events of 0.7 MB (100,000 numbers each: 4 MB once parsed) exported with a 1.5 MiB
    budget: every event comes out, in order, and the process's peak resident memory grows
    by a few budgets (4 MiB here). Chunks of 1,000 rows held all 16 at once, parsed: it
    grew by 65 MiB."""
    from django.db import connection

    budget = 3 << 19
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", budget)
    sent = [
        run_event(eventTime=f"2026-11-29T10:{minute:02d}:00Z", padding=list(range(100_000)))
        for minute in range(16)
    ]
    for event in sent:
        response = ingest_client.post(
            LINEAGE, data=orjson.dumps(event), content_type="application/json"
        )
        assert response.status_code == 201
    queries: list[str] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        queries.append(sql)
        return execute(sql, params, many, context)

    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current VmRSS
    before = _resident_mib("VmRSS")
    with connection.execute_wrapper(record):
        response = read_client.get("/api/v1/events/export")
        assert response.status_code == 200
        runs = [orjson.loads(line)["run"]["runId"] for line in response.streaming_content]
    grown = _resident_mib("VmHWM") - before
    print(f"export: peak resident memory grew by {grown:.1f} MiB in {len(queries)} queries")
    assert runs == [event["run"]["runId"] for event in sent]
    assert len(queries) >= 16 // 2, "11 MB of events cannot be fetched 1.5 MiB at a time"
    assert grown < 20, f"the export grew the process by {grown:.0f} MiB"


def test_payload_sizes_are_what_a_reader_fetches_not_what_postgresql_stores(
    ingest_client,
) -> None:
    """1 MiB of one character is stored compressed in 12 KB (pg_column_size, pglz): the
    size the export and the Marquez pages budget with is the 1 MiB the reader receives."""
    from django.db.models import F, Func, IntegerField

    event = run_event(padding="x" * (1 << 20))
    assert (
        ingest_client.post(
            LINEAGE, data=orjson.dumps(event), content_type="application/json"
        ).status_code
        == 201
    )
    stored = Event.objects.annotate(
        stored=Func(F("payload"), function="pg_column_size", output_field=IntegerField())
    ).get()
    (sized,) = Event.objects.payload_sizes(("id",), 0, 10)
    assert stored.stored < 64 * 1024 < (1 << 20) < sized.payload_bytes
    assert sized.payload_bytes >= len(orjson.dumps(event))  # jsonb's text adds blanks

"""manage.py backfill: formats, deduplication, refusals with reasons, resuming."""

import gzip
from pathlib import Path

import orjson
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ingest.backfill import StateFile
from ingest.models import Event
from tests.ingest.helpers import run_event

pytestmark = pytest.mark.django_db


def _backfill(*paths: Path, state: Path, capsys) -> str:
    call_command("backfill", *map(str, paths), "--state", str(state), "--chunk-size", "2")
    return capsys.readouterr().out


def test_backfill_reads_every_format_and_counts_duplicates_and_refusals(
    tmp_path: Path, capsys
) -> None:
    events = [run_event() for _ in range(7)]
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "one.json").write_bytes(orjson.dumps(events[0]))
    (folder / "array.json").write_bytes(orjson.dumps(events[1:3]))
    ndjson = b"\n".join(orjson.dumps(event) for event in events[3:5])
    (folder / "lines.ndjson").write_bytes(ndjson + b"\n{broken\n")
    marquez_rows = [{"event": event, "event_type": "START"} for event in events[5:7]]
    (folder / "marquez.json.gz").write_bytes(gzip.compress(orjson.dumps(marquez_rows)))
    (folder / "bad.json").write_bytes(orjson.dumps([run_event(eventTime="never"), events[0]]))
    (folder / "notes.txt").write_text("not an event file")

    output = _backfill(folder, state=tmp_path / "state.json", capsys=capsys)

    assert "stored 7, duplicate 1, refused 2" in output
    assert "/eventTime" in output
    assert "invalid JSON" in output
    assert sorted(Event.objects.values_list("run_id", flat=True)) == sorted(
        event["run"]["runId"] for event in events
    )
    again = _backfill(folder, state=tmp_path / "fresh-state.json", capsys=capsys)
    assert "stored 0, duplicate 8, refused 2" in again


def test_backfill_resumes_after_an_interruption(tmp_path: Path, capsys) -> None:
    events = [run_event() for _ in range(6)]
    first, second = tmp_path / "a.ndjson", tmp_path / "b.ndjson"
    first.write_bytes(b"\n".join(orjson.dumps(event) for event in events[:3]))
    second.write_bytes(b"\n".join(orjson.dumps(event) for event in events[3:]))
    state_path = tmp_path / "state.json"
    # As left by a run killed after finishing a.ndjson and two events into b.ndjson.
    state = StateFile(state_path)
    state.finish(first)
    state.advance(second, 2)

    output = _backfill(first, second, state=state_path, capsys=capsys)

    assert "skip" in output and "resume" in output
    assert "stored 1, duplicate 0, refused 0" in output
    assert list(Event.objects.values_list("run_id", flat=True)) == [events[5]["run"]["runId"]]


def test_backfill_of_a_missing_path_is_a_readable_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call_command("backfill", str(tmp_path / "nowhere.json"))

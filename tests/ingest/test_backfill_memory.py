"""manage.py backfill holds memory bounded by the per-event limit whatever a file holds
(issue 27 item 8), and writes no state file unless asked to.

The bound is checked structurally, not timed: the command runs in a process of its own under
an address-space cap (RLIMIT_AS) of what the same command needs for a one-event file plus
128 MiB. Before, the review's 62 KB gzip of empty lines took 684 MiB of RSS (66 million line
objects), and a 60 MiB JSON array was parsed whole; bench/backfill_memory.py prints the peaks.
"""

import gzip
import os
import resource
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import orjson
import pytest
from django.conf import settings
from django.core.management import call_command

from ingest.backfill import MAX_REASON_CHARS, MAX_REASONS
from ingest.models import Event
from tests.faults.processes import current_database_url
from tests.ingest.helpers import run_event

MIB = 1 << 20
HEADROOM = 128 * MIB  # the 8 MiB event limit, a read chunk and their copies fit many times
ROOT = Path(__file__).resolve().parents[2]
# The address space the command reached, printed as it exits.
PEAK = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    status = open('/proc/self/status').read()\n"
    "    print('peak-kib', status.split('VmPeak:')[1].split()[0], file=sys.stderr)\n"
    "atexit.register(peak)\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def _gzip(path: Path, parts: Iterable[bytes]) -> None:
    with gzip.open(path, "wb", compresslevel=1) as out:
        for part in parts:
            out.write(part)


def _repeat(piece: bytes, total: int) -> Iterable[bytes]:
    block = piece * (MIB // len(piece))
    return [block] * (total // len(block))


def _hostile_files(folder: Path, events: list[bytes]) -> None:
    """One valid event in each (40 large ones in one); the rest is what the review and its
    variants planted."""
    first, blanks, line, bomb, array, big_array, pretty, *large = events
    # The review's file (64 MiB of empty lines); a line that is not JSON keeps it from being
    # read as one document, which the old reader did when the blanks only followed an event.
    _gzip(folder / "empty.ndjson.gz", [first, b"\nnot json\n", *_repeat(b"\n", 63 * MIB)])
    _gzip(folder / "blanks.ndjson.gz", [blanks, b"\nnot json\n", *_repeat(b" \t\r\n", 60 * MIB)])
    # One 60 MiB line that never ends (no newline at the end of the file).
    _gzip(folder / "line.ndjson.gz", [line, b"\n", *_repeat(b"x", 60 * MIB)])
    # A gzip bomb: 256 MiB inflated, past the 64 MiB cap HTTP has.
    _gzip(folder / "bomb.ndjson.gz", [bomb, b"\n", *_repeat(b"y", 256 * MIB)])
    # A JSON array of 60 MiB (read whole before), and one past the cap (refused whole).
    strings = [b'"' + b"s" * MIB + b'"'] * 60
    (folder / "array.json").write_bytes(b"[" + b",".join([array, *strings]) + b"]")
    _gzip(folder / "big-array.json.gz", [b"[", big_array, *[b"," + s for s in strings * 2], b"]"])
    # 40 events of 4 MiB: a chunk of the default 1,000 events held them all before storing.
    _gzip(folder / "large.ndjson.gz", [event + b"\n" for event in large])
    (folder / "pretty.json").write_bytes(
        orjson.dumps(orjson.loads(pretty), option=orjson.OPT_INDENT_2)
    )


def _backfill(folder: Path, cap: int | None) -> tuple[subprocess.CompletedProcess[str], int]:
    def limit() -> None:
        if cap is not None:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": current_database_url(),
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-c", PEAK, str(ROOT / "manage.py"), "backfill", str(folder)],
        cwd=folder,
        env=env,
        preexec_fn=limit,  # the cap holds from the first allocation
        capture_output=True,
        text=True,
        timeout=600,
    )
    peak = result.stderr.rsplit("peak-kib", 1)
    return result, int(peak[1].split()[0]) * 1024 if len(peak) == 2 else 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)
def test_hostile_files_are_read_under_an_address_space_cap(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    (small / "one.ndjson").write_bytes(orjson.dumps(run_event()) + b"\n")
    baseline, baseline_peak = _backfill(small, cap=None)
    assert baseline.returncode == 0, baseline.stderr
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    events = [run_event() for _ in range(7)] + [
        run_event(padding="p" * (4 * MIB)) for _ in range(40)
    ]
    _hostile_files(hostile, [orjson.dumps(event) for event in events])

    result, peak = _backfill(hostile, cap=baseline_peak + HEADROOM)

    assert result.returncode == 0, result.stderr[-3000:]
    assert "stored 47, duplicate 0, refused 184" in result.stdout, result.stdout
    assert peak <= baseline_peak + HEADROOM
    stored = set(Event.objects.values_list("run_id", flat=True))
    assert {event["run"]["runId"] for event in events} <= stored
    limit = settings.LINEAGE["MAX_EVENT_BYTES"]
    assert f"refused 2x: event larger than {limit} bytes" in result.stdout
    assert "refused 180x: an event must be a JSON object, not str" in result.stdout
    written = {"empty", "blanks", "line", "bomb"}
    written |= {"large"}
    names = {f"{name}.ndjson.gz" for name in written} | {"array.json", "big-array.json.gz"}
    assert {entry.name for entry in hostile.iterdir()} == names | {"pretty.json"}, (
        "no state file is left in the working directory"
    )


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.django_db
def test_the_report_keeps_a_bounded_number_of_short_reasons(tmp_path: Path, capsys) -> None:
    """A reason quotes the refused value: 1,200 distinct 4 KB event times made 1,200 reasons
    of 4 KB each, all kept until the report."""
    lines = [orjson.dumps(run_event(eventTime=f"{n:04}" + "t" * 4096)) for n in range(1200)]
    _write(tmp_path / "times.ndjson", b"\n".join(lines))

    call_command("backfill", str(tmp_path / "times.ndjson"))

    report = capsys.readouterr().out.splitlines()
    assert report[0].startswith("stored 0, duplicate 0, refused 1200")
    refusals = [line for line in report if line.startswith("  refused")]
    assert len(refusals) == MAX_REASONS + 1
    assert max(len(line) for line in refusals) < MAX_REASON_CHARS + 200
    assert f"refused 200x: other reasons (more than {MAX_REASONS} kinds)" in "\n".join(report)


@pytest.mark.django_db
def test_arrays_are_cut_into_elements_that_are_checked_one_by_one(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    monkeypatch.setitem(settings.LINEAGE, "MAX_EVENT_BYTES", 4096)
    events = [
        run_event(job={"namespace": "n", "name": 'a "quoted", ] [ { } name'}) for _ in range(4)
    ]
    oversized = run_event(padding="p" * 5000)
    body = orjson.dumps(
        [events[0], oversized, events[1], "x", {"event": events[2]}], option=orjson.OPT_INDENT_2
    )
    _write(tmp_path / "array.json", body)
    # Cut short inside its third element: the first is stored, the rest refused.
    _write(tmp_path / "cut.json", b"[" + orjson.dumps(events[3]) + b', 5, {"eventType": "ST')

    monkeypatch.chdir(tmp_path)
    call_command("backfill", "array.json", "cut.json")

    output = capsys.readouterr().out
    assert "stored 4, duplicate 0, refused 4" in output, output
    assert "event larger than 4096 bytes (e.g. array.json[1])" in output
    assert "refused 1x: the JSON array ends inside a string" in output
    assert set(Event.objects.values_list("run_id", flat=True)) == {
        event["run"]["runId"] for event in events
    }
    # Without --state, nothing is written in the working directory (it used to be
    # .backfill-state.json, wherever the command ran).
    assert {entry.name for entry in tmp_path.iterdir()} == {"array.json", "cut.json"}

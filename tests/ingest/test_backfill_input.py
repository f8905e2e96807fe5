"""``manage.py backfill`` given what a tired operator gives it: a ``--state`` that is not a
state file (an export, a folder, a folder that does not exist, a half-edited file), a
``--chunk-size`` of none, a state file kept among the exports. Each is a readable
command-line error before anything is stored or overwritten, or is handled as meant."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from ingest.backfill import StateFile
from ingest.models import Event
from tests.ingest.helpers import run_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "export.ndjson"
    path.write_bytes(b"\n".join(orjson.dumps(run_event()) for _ in range(3)))
    return path


STATES = {
    "not JSON": b"{half written",
    "a JSON list": b"[1, 2]",
    "an event": orjson.dumps(run_event()),
    "a negative offset": b'{"done": [], "current": null, "offset": -5}',
    "a number as done": b'{"done": [3], "current": null, "offset": 0}',
}


@pytest.mark.parametrize("content", STATES.values(), ids=STATES.keys())
@pytest.mark.parametrize("restart", [[], ["--restart"]])
def test_a_state_file_that_is_not_one_is_refused_and_left_as_it_was(
    tmp_path: Path, export: Path, content: bytes, restart: list[str]
) -> None:
    """It was a KeyError or TypeError traceback; with --restart the file was deleted,
    whatever it was (an export named by mistake)."""
    state = tmp_path / "state.json"
    state.write_bytes(content)
    with pytest.raises(CommandError, match="is not a backfill state file"):
        call_command("backfill", str(export), "--state", str(state), *restart)
    assert state.read_bytes() == content
    assert not Event.objects.exists()


def test_the_export_itself_as_state_is_refused_and_kept(export: Path) -> None:
    content = export.read_bytes()
    for restart in ([], ["--restart"]):
        with pytest.raises(CommandError, match="is not a backfill state file"):
            call_command("backfill", str(export), "--state", str(export), *restart)
    assert export.read_bytes() == content
    assert not Event.objects.exists()


def test_a_state_path_that_cannot_be_written_is_refused_before_anything_is_stored(
    tmp_path: Path, export: Path
) -> None:
    """A missing folder failed after the first chunk was stored, with a traceback."""
    with pytest.raises(CommandError, match="cannot write the state file"):
        call_command("backfill", str(export), "--state", str(tmp_path / "no" / "state.json"))
    with pytest.raises(CommandError, match="state file"):
        call_command("backfill", str(export), "--state", str(tmp_path))
    assert not Event.objects.exists()


@pytest.mark.parametrize("size", ["0", "-3"])
def test_a_chunk_of_none_is_refused(export: Path, size: str) -> None:
    with pytest.raises(CommandError, match="--chunk-size must be 1 or more"):
        call_command("backfill", str(export), "--chunk-size", size)
    assert not Event.objects.exists()


def test_a_state_file_among_the_exports_is_not_read_as_events(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "a.ndjson").write_bytes(orjson.dumps(run_event()))
    state = folder / "progress.json"
    call_command("backfill", str(folder), "--state", str(state))
    call_command("backfill", str(folder), "--state", str(state), "--restart")
    output = capsys.readouterr().out
    assert "stored 1, duplicate 0, refused 0" in output
    assert "stored 0, duplicate 1, refused 0" in output
    assert sorted(path.name for path in folder.iterdir()) == ["a.ndjson", "progress.json"]


def test_from_the_shell_a_bad_state_is_one_line_and_exit_status_1(
    tmp_path: Path, export: Path
) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(b"[]")
    done = subprocess.run(
        [sys.executable, "manage.py", "backfill", str(export), "--state", str(state)],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.development"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().startswith("CommandError:"), done.stderr


@pytest.mark.django_db(False)
def test_two_runs_writing_one_state_file_at_once_each_write_whole_states(
    tmp_path: Path,
) -> None:
    """StateFile's promise: two runs sharing the file never write into one temporary file
    (with one name, one's rename took the other's, whose rename then failed), and neither
    leaves one behind. Threads switched often, so that writes interleave (no database)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    path, export = tmp_path / "state.json", tmp_path / "export.ndjson"
    failures: list[BaseException] = []

    def run() -> None:
        state = StateFile(path)
        try:
            for offset in range(200):
                state.advance(export, offset)
        except BaseException as error:  # told to the test, not lost in the thread
            failures.append(error)

    try:
        runs = [threading.Thread(target=run) for _ in range(2)]
        for each in runs:
            each.start()
        for each in runs:
            each.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    assert sorted(os.listdir(tmp_path)) == ["state.json"]
    assert orjson.loads(path.read_bytes())["offset"] == 199


def test_a_refusal_of_the_event_itself_names_no_empty_path(tmp_path: Path, capsys) -> None:
    """A line that is no JSON object is refused for the event as a whole (path ""): the
    report said ``refused 1x: : an event must be...``, an empty path and its colon."""
    path = tmp_path / "strings.ndjson"
    path.write_bytes(b'"not an event"\n' + orjson.dumps(run_event()))
    call_command("backfill", str(path))
    report = capsys.readouterr().out
    assert "  refused 1x: an event must be a JSON object, not str (e.g. " in report, report
    assert Event.objects.count() == 1

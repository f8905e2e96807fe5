"""Reading event files for ``manage.py backfill``: formats, chunking and resumable progress.

Formats, detected from content rather than file names: a JSON object (one event), a JSON
array of events, NDJSON (one event per line), any of them gzipped. Rows of a Marquez
``lineage_events`` export (``{"event": {...}, ...}``) are unwrapped to their event.
"""

import gzip
import os
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import orjson

from core.problems import Problem
from ingest import json_stream
from ingest.parsing import limits, parse_json

GZIP_MAGIC = b"\x1f\x8b"
EVENT_SUFFIXES = (".json", ".ndjson", ".jsonl", ".gz")


@dataclass
class Item:
    """One document read from a file, with where it came from for error reports."""

    location: str
    document: Any = None
    error: str | None = None


@dataclass
class Progress:
    """Counts of a backfill, and the state that makes it resumable."""

    stored: int = 0
    duplicate: int = 0
    refused: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)
    # Events stored with problems outside their core (ADR 0004), by problem path shape.
    with_warnings: int = 0
    warnings: dict[str, int] = field(default_factory=dict)
    warning_examples: dict[str, str] = field(default_factory=dict)

    def warn(self, location: str, messages: list[str]) -> None:
        self.with_warnings += 1
        for message in messages:
            message = _kept(message, self.warnings)
            self.warnings[message] = self.warnings.get(message, 0) + 1
            self.warning_examples.setdefault(message, location)

    def refuse(self, location: str, reason: str) -> None:
        self.refused += 1
        reason = _kept(reason, self.reasons)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self.examples.setdefault(reason, location)


# A reason quotes what it refuses (``/eventTime: '<the value>' is not an ISO 8601
# timestamp``): what the report keeps of reasons is bounded too, in length and in number, or
# a file of events with distinct bad values would keep every value until the report.
MAX_REASON_CHARS = 300
MAX_REASONS = 1000


def _kept(reason: str, counted: dict[str, int]) -> str:
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS] + "…"
    if reason not in counted and len(counted) >= MAX_REASONS:
        return f"other reasons (more than {MAX_REASONS} kinds)"
    return reason


def event_files(paths: list[Path]) -> list[Path]:
    """Files named on the command line, and event files found under named folders, sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(
                    candidate
                    for candidate in path.rglob("*")
                    if candidate.is_file() and candidate.name.endswith(EVENT_SUFFIXES)
                )
            )
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path} does not exist")
    return found


def _unwrap(document: Any) -> Any:
    if isinstance(document, dict) and "eventTime" not in document:
        inner = document.get("event")
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):
            return parse_json(inner.encode())
    return document


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        compressed = probe.read(2) == GZIP_MAGIC
    if compressed:
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def read_items(path: Path) -> Iterator[Item]:
    """Every document in ``path``, in file order (unparseable ones as errors).

    Memory is bounded by ``MAX_EVENT_BYTES`` (plus a 1 MiB read chunk), whatever the file
    holds and however large it is, gzipped or not (``ingest.json_stream``): a JSON array
    is cut into its elements and each is parsed alone; anything else is NDJSON, read a line
    at a time, a line over the limit read and dropped in chunks, blank lines skipped without
    being split out. A file that starts with ``{`` and is no larger than one event may also
    be one (pretty-printed) event. Before, a 62 KB gzip of empty lines took 684 MiB
    (bench/backfill_memory.py).
    """
    max_event = limits()["MAX_EVENT_BYTES"]
    location = str(path)
    try:
        with _open(path) as stream:
            window = json_stream.Window(stream)
            newlines, first = json_stream.first_byte(window)
            if first == b"[":
                for piece in json_stream.array_elements(window, max_event):
                    location = f"{path}[{piece.number}]"
                    yield _piece_item(location, piece, max_event)
                return
            if first == b"{" and (document := _one_document(window, max_event)) is not None:
                yield _item(f"{path}[0]", document)
                return
            for piece in json_stream.lines(window, max_event, newlines + 1):
                location = f"{path}:{piece.number}"
                yield _piece_item(location, piece, max_event)
    except (OSError, EOFError, zlib.error) as error:
        yield Item(location, error=f"unreadable file: {error}")


def _one_document(window: json_stream.Window, max_event: int) -> Any:
    """The whole rest of the file as one JSON document, when it is at most one event long
    and parses; None otherwise (then it is read as NDJSON from the same place)."""
    while len(window.data) <= max_event and window.more(0):
        pass
    if len(window.data) > max_event:
        return None
    try:
        return parse_json(window.data)
    except Problem:
        return None


def _piece_item(location: str, piece: json_stream.Piece, max_event: int) -> Item:
    if piece.error is not None:
        return Item(location, error=piece.error)
    if piece.data is None:
        return Item(location, error=f"event larger than {max_event} bytes")
    return _line_item(location, piece.data, max_event)


def _line_item(location: str, line: bytes, max_event: int) -> Item:
    if len(line.strip()) > max_event:
        return Item(location, error=f"event larger than {max_event} bytes")
    try:
        return _item(location, parse_json(line))
    except Problem as problem:
        return Item(location, error=f"invalid JSON: {problem.detail or problem.title}")


def _item(location: str, document: Any) -> Item:
    try:
        return Item(location, _unwrap(document))
    except Problem as problem:
        return Item(location, error=f"invalid JSON in 'event': {problem.detail}")


# A state file lists the files done, a path each: far under this even for a million files.
MAX_STATE_BYTES = 256 * 1024 * 1024


class StateFileError(ValueError):
    """The ``--state`` file cannot be read as, or written as, a backfill's progress."""


class StateFile:
    """Which files are done and how far the current one got; written after every chunk.

    Read and written once on creation, so a state file that is not one (another file named
    by mistake, an export, a folder, a folder that does not exist) is refused before
    anything is stored or overwritten, with ``restart`` too. Each write goes to a new
    temporary file beside it, then replaces it: a run stopped at any point leaves the
    previous state or the next, and two runs sharing the file never write into one
    temporary file (one's rename took the other's, which then failed).
    """

    def __init__(self, path: Path | None, restart: bool = False) -> None:
        self.path = path
        self.state: dict[str, Any] = {"done": [], "current": None, "offset": 0}
        if path is not None:
            if path.exists():
                # Read even to restart: --restart must not replace an export named by mistake.
                kept = _read_state(path)
                self.state = self.state if restart else kept
            self._write()

    def is_done(self, file: Path) -> bool:
        return str(file.resolve()) in self.state["done"]

    def resume_offset(self, file: Path) -> int:
        offset: int = self.state["offset"] if self.state["current"] == str(file.resolve()) else 0
        return offset

    def advance(self, file: Path, offset: int) -> None:
        self.state["current"], self.state["offset"] = str(file.resolve()), offset
        self._write()

    def finish(self, file: Path) -> None:
        self.state["done"].append(str(file.resolve()))
        self.state["current"], self.state["offset"] = None, 0
        self._write()

    def _write(self) -> None:
        if self.path is None:
            return
        try:
            descriptor, temporary = tempfile.mkstemp(
                dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
            )
        except OSError as error:
            raise StateFileError(f"cannot write the state file {self.path}: {error}") from error
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(orjson.dumps(self.state))
            os.replace(temporary, self.path)
        except BaseException as error:  # Ctrl-C too: no temporary file left behind
            Path(temporary).unlink(missing_ok=True)
            if isinstance(error, OSError):
                message = f"cannot write the state file {self.path}: {error}"
                raise StateFileError(message) from error
            raise


def _read_state(path: Path) -> dict[str, Any]:
    problem = f"{path} is not a backfill state file (give another --state, or --restart)"
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_STATE_BYTES + 1)
        state = orjson.loads(data) if len(data) <= MAX_STATE_BYTES else None
    except OSError as error:
        raise StateFileError(f"cannot read the state file {path}: {error}") from error
    except orjson.JSONDecodeError:
        raise StateFileError(problem) from None
    shaped = (
        isinstance(state, dict)
        and isinstance(state.get("done"), list)
        and all(isinstance(done, str) for done in state["done"])
        and isinstance(state.get("current"), str | None)
        and type(state.get("offset")) is int
        and state["offset"] >= 0
    )
    if not shaped:
        raise StateFileError(problem)
    return cast(dict[str, Any], state)

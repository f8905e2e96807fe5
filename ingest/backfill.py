"""Reading event files for ``manage.py backfill``: formats, chunking and resumable progress.

Formats, detected from content rather than file names: a JSON object (one event), a JSON
array of events, NDJSON (one event per line), any of them gzipped. Rows of a Marquez
``lineage_events`` export (``{"event": {...}, ...}``) are unwrapped to their event.
"""

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

import orjson

from ingest.parsing import limits, parse_json
from ingest.problems import Problem

GZIP_MAGIC = b"\x1f\x8b"
EVENT_SUFFIXES = (".json", ".ndjson", ".jsonl", ".gz")
_SKIP_STEP = 1 << 20


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
            self.warnings[message] = self.warnings.get(message, 0) + 1
            self.warning_examples.setdefault(message, location)

    def refuse(self, location: str, reason: str) -> None:
        self.refused += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        self.examples.setdefault(reason, location)


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

    Memory stays bounded whatever the file holds, gzipped or not: a file is read whole
    (to try it as one JSON document) only up to ``MAX_DECOMPRESSED_BYTES`` once inflated,
    the limit HTTP ingest has; beyond that it is read as NDJSON, a line at a time, and a
    line over ``MAX_EVENT_BYTES`` is refused without being kept (a 400 KB .gz inflating
    to 400 MB took 886 MB of memory when the file was inflated whole).
    """
    max_document = limits()["MAX_DECOMPRESSED_BYTES"]
    try:
        with _open(path) as stream:
            raw = stream.read(max_document + 1)
    except (OSError, EOFError, zlib.error) as error:
        yield Item(str(path), error=f"unreadable file: {error}")
        return
    if len(raw) <= max_document:
        yield from _whole_file_items(path, raw)
        return
    if raw.lstrip()[:1] == b"[":
        yield Item(
            str(path),
            error=f"a JSON array larger than {max_document} bytes; split it or write NDJSON",
        )
        return
    del raw
    yield from _line_items(path)


def _whole_file_items(path: Path, raw: bytes) -> Iterator[Item]:
    stripped = raw.lstrip()
    if stripped[:1] in (b"[", b"{"):
        try:
            document = parse_json(raw)
        except Problem:
            pass  # not one document: maybe NDJSON
        else:
            documents = document if isinstance(document, list) else [document]
            for index, item in enumerate(documents):
                yield _item(f"{path}[{index}]", item)
            return
    max_event = limits()["MAX_EVENT_BYTES"]
    for number, line in enumerate(raw.splitlines(), start=1):
        if line.strip():
            yield _line_item(f"{path}:{number}", line, max_event)


def _line_items(path: Path) -> Iterator[Item]:
    """NDJSON read one line at a time, each line at most ``MAX_EVENT_BYTES`` in memory."""
    max_event = limits()["MAX_EVENT_BYTES"]
    number = 0
    try:
        with _open(path) as stream:
            while True:
                line = stream.readline(max_event + 2)
                if not line:
                    return
                number += 1
                if len(line) > max_event + 1 and not line.endswith(b"\n"):
                    while (rest := stream.readline(_SKIP_STEP)) and not rest.endswith(b"\n"):
                        pass  # the rest of an oversized line, read and dropped in steps
                    yield Item(f"{path}:{number}", error=f"event larger than {max_event} bytes")
                    continue
                if line.strip():
                    yield _line_item(f"{path}:{number}", line, max_event)
    except (OSError, EOFError, zlib.error) as error:
        yield Item(f"{path}:{number + 1}", error=f"unreadable file: {error}")


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


class StateFile:
    """Which files are done and how far the current one got; written after every chunk."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.state: dict[str, Any] = {"done": [], "current": None, "offset": 0}
        if path is not None and path.exists():
            self.state = orjson.loads(path.read_bytes())

    def is_done(self, file: Path) -> bool:
        return str(file.resolve()) in self.state["done"]

    def resume_offset(self, file: Path) -> int:
        return self.state["offset"] if self.state["current"] == str(file.resolve()) else 0

    def advance(self, file: Path, offset: int) -> None:
        self.state["current"], self.state["offset"] = str(file.resolve()), offset
        self._write()

    def finish(self, file: Path) -> None:
        self.state["done"].append(str(file.resolve()))
        self.state["current"], self.state["offset"] = None, 0
        self._write()

    def _write(self) -> None:
        if self.path is not None:
            temporary = self.path.with_suffix(".tmp")
            temporary.write_bytes(orjson.dumps(self.state))
            temporary.replace(self.path)

"""A byte stream cut into JSON documents of bounded size, in memory bounded by that size.

``backfill`` reads files of any size and content; what it keeps in memory at once must
depend on the per-event limit, never on how many lines, blanks or elements a file holds
(issue 27 item 8: 64 MiB of empty lines became 66 million line objects, 684 MiB). Two
shapes are cut here:

- ``lines``: NDJSON. Runs of blank lines are skipped by C-speed searches, never split into
  objects; a line longer than the limit is read and dropped in chunks.
- ``array_elements``: a JSON array, cut at its top-level commas by a scanner that knows
  strings and nesting (regular expressions skip string contents and everything else that
  is not a bracket or a comma, in C), so that each element is parsed alone.

Each keeps at most the limit plus one read chunk of the stream (``CHUNK``).
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

CHUNK = 1 << 20
# What bytes.strip() strips: a line of only these is blank.
_NONBLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
# Outside strings: everything up to the next bracket, brace, comma or unfinished string;
# a whole string is consumed at once. Possessive, so nothing backtracks.
_OUTSIDE = re.compile(rb'(?:[^"\[\]{},]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL)
# Inside a string that crossed a chunk boundary: up to its closing quote or an escape.
_INSIDE = re.compile(rb'[^"\\]*+')


@dataclass
class Piece:
    """One document's bytes: a line (``number`` counts from 1) or an array element
    (``number`` counts from 0). ``data`` is None when it was over the limit (read, dropped);
    ``error`` says the structure around it is broken, and nothing after it is read."""

    number: int
    data: bytes | None = None
    error: str | None = None


class Window:
    """The part of a stream being looked at: ``data``, from the stream's read chunks."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.data = b""
        self.ended = False

    def drop(self, count: int) -> None:
        """Forget ``data[:count]``: positions into ``data`` move back by ``count``."""
        if count:
            self.data = self.data[count:]

    def more(self, keep: int) -> bool:
        """``drop(keep)`` and read one more chunk; False at the end of the stream."""
        chunk = b"" if self.ended else self.stream.read(CHUNK)
        self.data = self.data[keep:] + chunk
        self.ended = not chunk
        return bool(chunk)


def first_byte(window: Window) -> tuple[int, bytes]:
    """Skip the stream's leading blanks: how many newlines they held, and the first other
    byte (``b""`` when there is none), which is then ``window.data[:1]``."""
    newlines = 0
    while True:
        found = _NONBLANK.search(window.data)
        if found is not None:
            newlines += window.data.count(b"\n", 0, found.start())
            window.drop(found.start())
            return newlines, window.data[:1]
        newlines += window.data.count(b"\n")
        if not window.more(len(window.data)):
            return newlines, b""


def lines(window: Window, max_line: int, number: int = 1) -> Iterator[Piece]:
    """The non-blank lines from ``window.data[0]`` on; ``number`` is the first one's."""
    position = 0
    while True:
        found = _NONBLANK.search(window.data, position)
        if found is None:
            number += window.data.count(b"\n", position)
            if not window.more(len(window.data)):
                return
            position = 0
            continue
        start = found.start()
        number += window.data.count(b"\n", position, start)
        end = window.data.find(b"\n", start)
        if end == -1:
            if len(window.data) - start > max_line + 1:
                yield Piece(number, None)
                if not _drop_to_newline(window):
                    return
                number, position = number + 1, 0
                continue
            position = 0
            if window.more(start):
                continue  # the line goes on: search it again from its start
            start, end = 0, len(window.data)  # the last line, without a newline
        line = window.data[start:end].rstrip()
        yield Piece(number, line if len(line) <= max_line else None)
        number, position = number + 1, end + 1


def _drop_to_newline(window: Window) -> bool:
    """Read and drop the rest of an oversized line; False when the stream ends in it."""
    while window.more(len(window.data)):
        end = window.data.find(b"\n")
        if end != -1:
            window.drop(end + 1)
            return True
    return False


def array_elements(window: Window, max_element: int) -> Iterator[Piece]:
    """The elements of the JSON array that opens at ``window.data[0]`` (a ``[``), each as
    its bytes; a structure broken at the top level ends it with an error."""
    yield from _ArrayScanner(window, max_element).elements()


class _ArrayScanner:
    def __init__(self, window: Window, max_element: int) -> None:
        self.window = window
        self.limit = max_element
        self.position = 1  # past the "["
        self.start = 1  # where the current element began
        self.dropped = False  # the current element is over the limit: its bytes are let go

    def _more(self) -> bool:
        """Read on, keeping the current element's bytes unless it is over the limit."""
        if self.dropped or self.position - self.start > self.limit:
            self.dropped = True
            self.start = self.position
        keep = self.start
        more = self.window.more(keep)
        self.position -= keep
        self.start -= keep
        return more

    def elements(self) -> Iterator[Piece]:
        depth, index, in_string = 0, 0, False
        while True:
            data = self.window.data
            if in_string:
                self.position = _INSIDE.match(data, self.position).end()  # type: ignore[union-attr]
                at_end = self.position >= len(data)
                if at_end or (data[self.position] == _BACKSLASH and self.position + 1 >= len(data)):
                    if not self._more():  # an escape needs the byte after it, too
                        yield Piece(index, error="the JSON array ends inside a string")
                        return
                    continue
                in_string = data[self.position] != _QUOTE
                self.position += 1 if not in_string else 2  # a quote; an escape and its byte
                continue
            self.position = _OUTSIDE.match(data, self.position).end()  # type: ignore[union-attr]
            if self.position >= len(data):
                if not self._more():
                    yield Piece(index, error="the JSON array is not closed")
                    return
                continue
            byte = data[self.position]
            if byte == _QUOTE:  # a string that goes on past what has been read
                in_string = True
            elif byte in b"[{":
                depth += 1
            elif depth and byte in b"]}":
                depth -= 1
            elif depth == 0 and byte in b",]":
                element = data[self.start : self.position].strip()
                too_large = self.dropped or len(element) > self.limit
                if byte == _COMMA or index or too_large or element:  # "[]" has no element
                    yield Piece(index, None if too_large else element)
                if byte == _CLOSE:
                    yield from self._after_the_end(index + 1)
                    return
                index, self.start, self.dropped = index + 1, self.position + 1, False
            elif depth == 0:
                yield Piece(index, error="the JSON array is broken: '}' without '{'")
                return
            self.position += 1

    def _after_the_end(self, index: int) -> Iterator[Piece]:
        window = self.window
        window.drop(self.position + 1)
        while True:
            if _NONBLANK.search(window.data):
                yield Piece(index, error="content after the JSON array's end")
                return
            if not window.more(len(window.data)):
                return


_QUOTE, _BACKSLASH, _COMMA, _CLOSE = b'"\\,]'

"""Lenient timestamp parsing, for the forms real OpenLineage producers send.

Accepted: ISO 8601 / RFC 3339 with ``Z`` or an offset, without a zone (taken as UTC, as
Marquez does), with a space instead of ``T``, with 1-9 fractional digits (nanoseconds are
truncated to microseconds), and epoch numbers (seconds, or milliseconds when large).
"""

import re
from datetime import UTC, datetime, timedelta

_FRACTION = re.compile(r"(\.\d{6})\d+")
_COMPACT_OFFSET = re.compile(r"([+-]\d{2})(\d{2})$")
_EPOCH_MILLIS_THRESHOLD = 10**11  # later than year 5138 in seconds: must be milliseconds
# PostgreSQL's timestamptz takes offsets up to ±15:59:59; Python's datetime takes up to
# ±23:59:59.999999, so a parsed value can hold one PostgreSQL refuses (an error, a 500).
POSTGRESQL_OFFSET_LIMIT = timedelta(hours=16)


def parse_timestamp(value: object) -> datetime | None:
    """A timezone-aware datetime, or None when ``value`` is not a timestamp we understand."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) >= _EPOCH_MILLIS_THRESHOLD else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not 8 <= len(value) <= 64:
        return None
    text = value.strip()
    # Each substitution runs only when the byte its pattern must match is there: a regular
    # expression's call costs more than the test (both were 3.5% of a batch's GIL-held
    # time, docs/benchmarks.md), and what they change is unchanged.
    if "." in text:
        text = _FRACTION.sub(r"\1", text)
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    if len(text) >= 5 and text[-5] in "+-" and ("T" in text or " " in text):
        text = _COMPACT_OFFSET.sub(r"\1:\2", text)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        # Normalised to UTC here so that a time at the edge of the calendar with an offset
        # (9999-12-31T23:59:59-14:00) is refused at ingest instead of failing every read.
        return parsed.astimezone(UTC)
    except OverflowError:
        return None


def postgresql_takes(value: datetime) -> bool:
    """Whether PostgreSQL takes aware ``value`` as it is, and it has a UTC time Python can
    hold: an offset within ±15:59:59 and an instant from year 1 to 9999 in UTC. A moment
    read from a request (a cursor's position, an admin lookup) that is not is refused there:
    sent as it is, PostgreSQL refused ``-23:59`` with an error (a 500)."""
    offset = value.utcoffset()
    if offset is None:
        return True
    if abs(offset) >= POSTGRESQL_OFFSET_LIMIT:
        return False
    try:
        value.astimezone(UTC)
    except OverflowError:
        return False
    return True

"""Lenient timestamp parsing, for the forms real OpenLineage producers send.

Accepted: ISO 8601 / RFC 3339 with ``Z`` or an offset, without a zone (taken as UTC, as
Marquez does), with a space instead of ``T``, with 1-9 fractional digits (nanoseconds are
truncated to microseconds), and epoch numbers (seconds, or milliseconds when large).
"""

import re
from datetime import UTC, datetime

_FRACTION = re.compile(r"(\.\d{6})\d+")
_COMPACT_OFFSET = re.compile(r"([+-]\d{2})(\d{2})$")
_EPOCH_MILLIS_THRESHOLD = 10**11  # later than year 5138 in seconds: must be milliseconds


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

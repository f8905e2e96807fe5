"""``parse_timestamp`` runs its two substitutions only when their patterns can match
(ADR 0096); its answers are those of the form that always ran them, kept here as oracle."""

import random
import re
from datetime import UTC, datetime

import pytest

from core.timestamps import parse_timestamp

_FRACTION = re.compile(r"(\.\d{6})\d+")
_COMPACT_OFFSET = re.compile(r"([+-]\d{2})(\d{2})$")


def always_substituted(value: str) -> datetime | None:
    """The string branch as it was before (core/timestamps.py at 9444a8a)."""
    if not 8 <= len(value) <= 64:
        return None
    text = value.strip()
    text = _FRACTION.sub(r"\1", text)
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    text = _COMPACT_OFFSET.sub(r"\1:\2", text) if "T" in text or " " in text else text
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        return None


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-29T10:00:00Z",
        "2026-11-29T10:00:00.123456789Z",
        "2026-11-29T10:00:00.1234567+0200",
        "2026-11-29 10:00:00-0530",
        "2026-11-29T10:00:00+05:30",
        "2026-11-29T10:00:00",
        "20261129T100000+0100",
        "2026-11-29T10:00:00.5z",
        " 2026-11-29T10:00:00+0000\n",
        "2026-11-29",
        "2026-11-29T10:00:00+\u0660\u0661\u0660\u0660",  # Arabic-Indic digits (\\d matches)
        "9999-12-31T23:59:59-1400",
    ],
)
def test_cases(text: str) -> None:
    assert parse_timestamp(text) == always_substituted(text)


def _timestamp(rng: random.Random) -> str:
    """An ISO 8601 timestamp in one of the forms producers send, sometimes damaged."""
    text = f"{rng.randrange(1, 10000):04d}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    text += rng.choice(["T", " ", "t", ""]) + rng.choice(["10:00:00", "23:59:59", "1000", ""])
    text += rng.choice(["", "." + "123456789"[: rng.randrange(1, 10)]])
    text += rng.choice(
        ["", "Z", "z", "+0200", "-0530", "+05:30", "+1400", "-14:00", "+\u0660\u0662\u0660\u0660"]
    )
    if rng.random() < 0.3:  # a character dropped, doubled or replaced
        where = rng.randrange(len(text))
        text = text[:where] + rng.choice(["", text[where] * 2, "+", ".", "9"]) + text[where + 1 :]
    return rng.choice(["", " "]) + text + rng.choice(["", "\n"])


def test_random_timestamps() -> None:
    rng = random.Random(42)
    parsed = 0
    for _ in range(20_000):
        text = _timestamp(rng)
        expected = always_substituted(text)
        assert parse_timestamp(text) == expected, repr(text)
        parsed += expected is not None
    assert 5_000 < parsed < 19_000  # both outcomes are well represented

"""The pieces of the graph's statement (catalog.lineage.prebuilt, ADR 0114) against what
orjson writes for the same values, over values chosen at the edges of each rule: every
microsecond count from one digit to six, trailing zeros, whole seconds at every field's
zero, and the booleans, integers and uuids ``concat`` writes by their output functions."""

import re
import uuid
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from django.db import connection

from catalog.lineage import prebuilt
from core.sql_timestamps import json_moment

pytestmark = pytest.mark.django_db

TIMES = [
    datetime(2000, 1, 1, tzinfo=UTC),  # every field of the time zero
    datetime(2026, 12, 6, 10, 0, 0, tzinfo=UTC),
    datetime(2026, 12, 6, 10, 0, 10, tzinfo=UTC),  # a whole second ending in zero
    datetime(2026, 12, 6, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 12, 6, 0, 0, 0, 10, tzinfo=UTC),
    datetime(2026, 12, 6, 0, 0, 0, 100_000, tzinfo=UTC),
    datetime(2026, 12, 6, 0, 0, 0, 120, tzinfo=UTC),
    datetime(2026, 12, 6, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(2026, 3, 29, 1, 30, 0, 500_000, tzinfo=UTC),
] + [datetime(2024, 2, 29, tzinfo=UTC) + timedelta(microseconds=10**k) for k in range(7)]


def _written(expression: str, values: dict) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {expression}", values)
        return cursor.fetchone()[0]


@pytest.mark.parametrize("iso", [True, False])
def test_a_timestamp_is_orjsons_text(iso):
    with connection.cursor() as cursor:
        cursor.execute("SET DateStyle = 'ISO, MDY'" if iso else "SET DateStyle = 'SQL, DMY'")
    try:
        for moment in [*TIMES, None]:
            for nullable in (True,) if moment is None else (True, False):
                sql = json_moment("%(t)s::timestamptz", nullable, iso)
                expected = orjson.dumps(moment, option=orjson.OPT_UTC_Z).decode()
                assert _written(sql, {"t": moment}) == expected, moment
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET DateStyle = 'ISO, MDY'")


def test_a_timestamp_is_written_once():
    """In an ISO session the timestamp's text is computed once per value: an expression
    referenced twice is evaluated twice (ADR 0109 measured ~0.7 µs each, ~2,300 per graph)."""
    assert json_moment("x.seen", nullable=True, iso=True).count("x.seen") == 1
    assert json_moment("x.seen", nullable=False, iso=True).count("x.seen") == 1


def test_values_cast_to_text_are_written_as_orjson_does():
    """Every non-text operand of the statement's ``||`` is cast to text (ADR 0114): a
    boolean's cast writes ``true``/``false``, integers and uuids JSON's spelling."""
    run = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")
    values = {"big": 2**62, "small": -7, "yes": True, "no": False, "run": run}
    written = _written(
        "'[' || (%(big)s)::bigint::text || ',' || (%(small)s)::int::text || ',' "
        "|| %(yes)s::bool::text || ',' || %(no)s::bool::text || ',\"' || %(run)s::uuid::text "
        "|| '\"]'",
        values,
    )
    assert written == orjson.dumps([2**62, -7, True, False, str(run)]).decode()


@pytest.mark.parametrize("iso", [True, False])
def test_no_operand_of_a_concatenation_is_left_to_textanycat(iso):
    """``text || bigint`` is ``textanycat``, a SQL function the planner inlines by parsing
    its body at every place it is used (~27 in this statement): each is cast instead."""
    statement = prebuilt._STATEMENTS[iso]
    operands = re.findall(r"\|\|\s*(to_json\([a-z.]+\)|[a-z]{1,2}\.[a-z_]+)(::text)?", statement)
    operands += [
        (found, cast)
        for found, cast in re.findall(
            r"(to_json\([a-z.]+\)|[a-z]{1,2}\.[a-z_]+)(::text)?\s*\|\|", statement
        )
    ]
    assert len(operands) > 20
    assert [found for found, cast in operands if not cast] == []

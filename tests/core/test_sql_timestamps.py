"""A timestamptz written by PostgreSQL (core.sql_timestamps) is the text the answers write
for the datetime (``api.marquez.shapes.ts``), in every DateStyle (ADR 0129)."""

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction

from api.marquez.shapes import ts
from core import sql_timestamps

pytestmark = pytest.mark.django_db


def _moments() -> list[datetime]:
    """Whole seconds, fractions with trailing zeros (.1, .120, .000100), the first and last
    microsecond of a second, midnight, leap days, far and near years, and random ones."""
    rng = random.Random(129)
    fixed = [
        datetime(2026, 12, 6, 16, 17, 26, tzinfo=UTC),
        datetime(2026, 12, 6, 16, 17, 26, 100000, tzinfo=UTC),
        datetime(2026, 12, 6, 16, 17, 26, 120000, tzinfo=UTC),
        datetime(2026, 12, 6, 16, 17, 26, 100, tzinfo=UTC),
        datetime(2026, 12, 6, 16, 17, 26, 1, tzinfo=UTC),
        datetime(2026, 12, 6, 16, 17, 26, 999999, tzinfo=UTC),
        datetime(2026, 1, 1, 0, 0, tzinfo=UTC),
        datetime(2024, 2, 29, 23, 59, 59, 500000, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1, 1, 1, 0, 0, 0, 10, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999990, tzinfo=UTC),
    ]
    start = datetime(1990, 1, 1, tzinfo=UTC)
    drawn = [
        start + timedelta(microseconds=rng.randrange(0, 60 * 365 * 86_400 * 10**6))
        for _ in range(300)
    ]
    # Random ones cut to whole seconds and to milliseconds too.
    return [
        *fixed,
        *drawn,
        *(moment.replace(microsecond=0) for moment in drawn[:50]),
        *(
            moment.replace(microsecond=moment.microsecond // 1000 * 1000)
            for moment in drawn[50:100]
        ),
    ]


@pytest.mark.parametrize(
    "date_style", ["ISO, MDY", "ISO, DMY", "SQL, DMY", "Postgres, MDY", "German"]
)
def test_postgresql_writes_what_the_answers_write(date_style):
    moments = _moments()
    with transaction.atomic(), connection.cursor() as cursor:
        # A session zone that is not UTC too: the text is written in UTC all the same.
        cursor.execute(f"SET LOCAL DateStyle = '{date_style}'; SET LOCAL TimeZone = 'Asia/Kolkata'")
        iso = sql_timestamps.date_style_is_iso(connection)
        assert iso == date_style.startswith("ISO")
        sql = sql_timestamps.written(
            "SELECT {moment:m}, {moment:n} FROM unnest(%s::timestamptz[]) AS t(m), "
            "(SELECT NULL::timestamptz) AS u(n) ORDER BY m"
        )[iso]
        cursor.execute(sql, [moments])
        rows = cursor.fetchall()
    assert [row[0] for row in rows] == [ts(moment) for moment in sorted(moments)]
    assert {row[1] for row in rows} == {None}  # NULL stays NULL, as ts(None) is None


def test_text_passes_through_ts():
    assert ts("2026-12-06T16:17:26Z") == "2026-12-06T16:17:26Z"
    assert ts(None) is None

"""Read ``timestamptz`` columns at C speed on UTC connections (docs/adr/0054).

Django's psycopg 3 backend registers a Python loader for ``timestamptz`` on every
connection (``BaseTzLoader``): psycopg's pure-Python parser, then ``replace(tzinfo=...)``.
It does this even where psycopg's C extension is installed, so every timestamp a read
returns costs ~12 µs: a lineage graph loads ~600 of them, a fifth of its CPU.

With ``USE_TZ`` and a UTC connection (this project's settings), PostgreSQL writes each
value in ISO form with a ``+00`` offset, which ``datetime.fromisoformat`` (C) parses to the
same aware datetime, with ``datetime.timezone.utc`` as its zone, as Django's loader returns.
Anything else (another DateStyle or session zone, ``infinity``, BC dates) falls back to
Django's loader, so answers and errors are unchanged; tests/core/test_db_timestamps.py
holds the two to the same values.
"""

from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db.backends.postgresql.psycopg_any import BaseTzLoader


class UtcTimestamptzLoader(BaseTzLoader):
    # Django's create_cursor compares this with the connection's zone, and registers its
    # own loader on each cursor when they differ.
    timezone = UTC

    def load(self, data: Any) -> datetime:
        try:
            value = datetime.fromisoformat(bytes(data).decode())
        except ValueError:
            return super().load(data)
        if value.tzinfo is not UTC:
            return super().load(data)
        return value


def install(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: the fast loader on a PostgreSQL UTC connection."""
    if connection.vendor != "postgresql" or not settings.USE_TZ or connection.timezone != UTC:
        return
    connection.connection.adapters.register_loader("timestamptz", UtcTimestamptzLoader)

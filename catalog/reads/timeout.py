"""Reads bounded in time: one transaction whose statements stop after a timeout."""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import OperationalError, connection, transaction

from core.statement_timeout import is_statement_timeout


class ReadTimedOut(Exception):
    """A statement of the read ran past the timeout (PostgreSQL cancelled it)."""


@contextmanager
def bounded_read(timeout_ms: int) -> Iterator[None]:
    """Everything inside runs in one transaction under ``SET LOCAL statement_timeout``, so
    the setting ends with it and the connection stays usable after a cancelled statement.
    A ``timeout_ms`` of 0 sets nothing: the connection's own timeout applies (a database
    role's, behind PgBouncer), rather than none at all."""
    try:
        with transaction.atomic():
            if timeout_ms:
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL statement_timeout = %s", [timeout_ms])
            yield
    except OperationalError as error:
        if not is_statement_timeout(error):
            raise
        raise ReadTimedOut from None

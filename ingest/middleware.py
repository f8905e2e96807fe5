"""Turn "the database is unreachable" into a 503 problem with Retry-After, never a 500.

OpenLineage clients retry 503 (and never retry a 4xx), so an outage costs them a retry,
not an event. A statement the web process's timeout cancelled (core/statement_timeout.py)
is a 503 of its own: the database is there, the request asked too much of it.
"""

import logging
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import SAFE_METHODS

from core.problems import Problem, problem_response
from core.statement_timeout import is_statement_timeout, statement_timed_out

logger = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = "5"


# What a 503 tells the client to do. A read's answer says nothing of storing: a client
# that only reads would wonder what it was meant to have stored.
_RETRY = "Retry the same request later."
_WRITE_RETRY = "Nothing was stored. " + _RETRY
# A write whose connection was open when it was lost: the server may have run and
# committed its statement (an autocommit INSERT, a COMMIT) without the answer arriving.
# A metadata record without its own resource and timestamp gets a fresh id and "now" on
# each request (docs/ingest.md), so its retry is a new record: the answer says so.
_WRITE_IN_DOUBT = (
    "The connection to the database was lost during the request, so it may have been "
    "stored. " + _RETRY + " What was stored before is answered as a duplicate, not "
    "stored twice (a metadata record only when it names its resource and timestamp)."
)


def database_unavailable(method: str | None, *, in_doubt: bool = False) -> Problem:
    """The 503 problem; ``in_doubt``: a write may have been stored (see ``lost_midway``)."""
    write = _WRITE_IN_DOUBT if in_doubt else _WRITE_RETRY
    detail = _RETRY if method in SAFE_METHODS else write
    return Problem(
        status=503,
        slug="database-unavailable",
        title="The database is unavailable",
        detail=detail,
        headers={"Retry-After": RETRY_AFTER_SECONDS},
    )


def lost_midway() -> bool:
    """Whether a connection was open when the database was lost, so that what the request
    sent on it may have reached the server and been committed there.

    Why: "nothing was stored" is true only when nothing could reach the server, that is,
    when no connection could be opened (Django keeps none then). Once one was open, the
    server may have committed a statement whose answer was lost on the way back (the
    single-event INSERT commits at once, in autocommit). This answer may say "may" where
    nothing was sent (the connection was lost on a read before the write): never the
    other way round.
    """
    return any(
        database.connection is not None for database in connections.all(initialized_only=True)
    )


def is_connection_error(error: BaseException) -> bool:
    if isinstance(error, OperationalError | InterfaceError):
        return True
    # A connection dropped mid-transaction surfaces as a generic DatabaseError from psycopg.
    return isinstance(error, DatabaseError) and any(
        connection.connection is not None and connection.connection.closed
        for connection in connections.all(initialized_only=True)
    )


def database_error_response(request: HttpRequest, error: BaseException) -> HttpResponse | None:
    """The 503 answer to a database error (this middleware's and the ingest fast path's),
    None for any other exception."""
    if is_statement_timeout(error):
        logger.warning("statement_timeout path=%s", request.path)
        return problem_response(statement_timed_out())
    if is_connection_error(error):
        logger.warning("database_unavailable path=%s error=%s", request.path, error)
        in_doubt = lost_midway()  # before the closes below forget the connections
        for connection in connections.all(initialized_only=True):
            connection.close_if_unusable_or_obsolete()
        return problem_response(database_unavailable(request.method, in_doubt=in_doubt))
    return None


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return database_error_response(request, exception)

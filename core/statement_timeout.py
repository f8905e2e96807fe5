"""The web process's statement timeout: set when a connection opens, recognised when it fires.

Every request the web server answers (``/api/v1``, the admin, the Marquez mount) runs its
statements under ``LINEAGE["READ_STATEMENT_TIMEOUT_MS"]``. The timeout is a connection
parameter (``options=-c statement_timeout=...``), sent with the connection's start-up
packet: no statement per request, so the pinned query counts stay as they are. Only the web
entry points (config/wsgi.py, config/asgi.py) set it; the Celery worker, the Kafka consumer
and management commands open their connections without it, since derivation and backfill
run long (docs/deploy.md, "Statement timeout").
"""

import re
from collections.abc import Mapping
from typing import Any

from core.problems import Problem

QUERY_CANCELED = "57014"  # PostgreSQL's SQLSTATE for a statement it cancelled
RETRY_AFTER_SECONDS = "5"
_EARLIER_TIMEOUT = re.compile(r"\s*-c\s*statement_timeout=\S*")


def limit_statement_time(databases: Mapping[str, Any], timeout_ms: int) -> None:
    """Make every connection opened from ``databases`` (Django's DATABASES) start with
    ``statement_timeout = timeout_ms`` (0: no limit). Call it before the first connection."""
    for database in databases.values():
        options = database.setdefault("OPTIONS", {})
        others = _EARLIER_TIMEOUT.sub("", options.get("options", "")).strip()
        options["options"] = f"{others} -c statement_timeout={int(timeout_ms)}".strip()


def is_statement_timeout(error: BaseException) -> bool:
    """Whether PostgreSQL cancelled the statement (Django wraps psycopg's QueryCanceled,
    whose ``sqlstate`` it keeps as ``__cause__``)."""
    cause = error if hasattr(error, "sqlstate") else error.__cause__
    return getattr(cause, "sqlstate", None) == QUERY_CANCELED


def statement_timed_out() -> Problem:
    """The 503 a request gets when one of its statements ran past the timeout. Whatever
    the request was writing is rolled back with it: nothing was stored or changed."""
    return Problem(
        status=503,
        slug="statement-timeout",
        title="The query took too long",
        detail=(
            "The database stopped a statement of this request at the service's statement "
            "timeout; nothing was stored or changed. Narrow the request (a filter, a smaller "
            "depth or page) or retry later."
        ),
        headers={"Retry-After": RETRY_AFTER_SECONDS},
    )

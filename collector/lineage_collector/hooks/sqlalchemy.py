"""SQLAlchemy: one class-level ``after_cursor_execute`` listener on ``Engine``.

Listening on the class covers engines created before and after installation; the event
fires only after the DBAPI call succeeded, so failed statements are never lineage.
"""

from typing import Any

from lineage_collector.context import current_run
from lineage_collector.errors import counters
from lineage_collector.records import SQL
from lineage_collector.runtime import RUNTIME

_installed = False


def _after_cursor_execute(
    connection: Any,
    cursor: Any,
    statement: str,
    parameters: Any,
    context: Any,
    executemany: bool,
) -> None:
    # The hot path: one ContextVar read, two length checks, one append. Nothing else.
    run = current_run.get()
    if run is None or not RUNTIME.active:
        return
    if len(statement) > RUNTIME.max_statement_chars:
        # The worker would skip it anyway; queued, it would keep a statement of any size
        # alive (10,000 slots of a multi-megabyte INSERT ... VALUES) until then.
        counters.bump("sql.skipped_too_large")
        return
    if len(RUNTIME.queue) < RUNTIME.capacity:
        RUNTIME.queue.append((SQL, run, statement, connection.engine))
        if RUNTIME.needs_start:
            RUNTIME.start_worker()
    else:
        RUNTIME.dropped()


def install_sqlalchemy() -> bool:
    """Listen on every SQLAlchemy engine; False when SQLAlchemy is not installed."""
    global _installed
    try:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
    except ImportError:
        return False
    if not _installed:
        event.listen(Engine, "after_cursor_execute", _after_cursor_execute)
        _installed = True
        counters.bump("hooks.sqlalchemy")
    return True


def uninstall_sqlalchemy() -> None:
    global _installed
    if not _installed:
        return
    # Installed (install_sqlalchemy imported it): SQLAlchemy is an optional extra.
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    event.remove(Engine, "after_cursor_execute", _after_cursor_execute)
    _installed = False

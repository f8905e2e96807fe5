"""Hand newly stored events to the derivation workers, after commit, off the request path.

The commit in PostgreSQL is the acknowledgement; the broker is only a nudge. After commit,
the new event ids go into an in-process queue (microseconds); a daemon publisher thread
drains it and sends one ``catalog.derive_events`` task per burst of ids, and at most one
per ``LINEAGE["ENQUEUE_INTERVAL_MS"]``, so a busy web process publishes ten tasks per second
instead of one per request (a publish costs ~0.4-0.9 ms of CPU, docs/benchmarks.md). When Redis is
unreachable the publish fails fast (see CELERY_BROKER_TRANSPORT_OPTIONS) and the thread
backs off; events that were never published, or were lost with a killed process, are
derived by the periodic sweep.
"""

import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

MAX_IDS_PER_TASK = 1000
_COALESCE_SECONDS = 0.02

_pending: "queue.SimpleQueue[list[int]]" = queue.SimpleQueue()
_publisher: threading.Thread | None = None
_publisher_pid = 0
_publisher_lock = threading.Lock()
_idle = threading.Event()
_idle.set()  # nothing in flight until the first hand-over
_skip_broker_until = 0.0


def enqueue_derivation_on_commit(event_ids: Sequence[int]) -> None:
    """Schedule derivation of ``event_ids`` once the surrounding transaction commits."""
    if event_ids:
        transaction.on_commit(partial(_hand_over, list(event_ids)))


def _hand_over(event_ids: list[int]) -> None:
    _ensure_publisher()
    _idle.clear()
    _pending.put(event_ids)


def _ensure_publisher() -> None:
    # One thread per process; a forked child (web worker, Celery prefork) starts its own.
    global _publisher, _publisher_pid
    if _publisher is not None and _publisher_pid == os.getpid() and _publisher.is_alive():
        return
    with _publisher_lock:
        if _publisher is None or _publisher_pid != os.getpid() or not _publisher.is_alive():
            _publisher = threading.Thread(target=_run, name="derive-publisher", daemon=True)
            _publisher_pid = os.getpid()
            _publisher.start()


def _run() -> None:
    last_publish = 0.0
    while True:
        try:
            batch = _pending.get(timeout=1.0)
        except queue.Empty:
            _idle.set()
            continue
        # Gather for a moment, and until the process's last publish is an interval old:
        # idle, the first id goes out after _COALESCE_SECONDS; busy, one task per interval
        # carries everything that arrived in it (a publish costs ~0.4-0.9 ms of CPU).
        interval = settings.LINEAGE["ENQUEUE_INTERVAL_MS"] / 1000
        deadline = max(time.monotonic() + _COALESCE_SECONDS, last_publish + interval)
        while len(batch) < MAX_IDS_PER_TASK:
            try:
                batch.extend(_pending.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        for start in range(0, len(batch), MAX_IDS_PER_TASK):
            publish(batch[start : start + MAX_IDS_PER_TASK])
        last_publish = time.monotonic()
        if _pending.empty():
            _idle.set()


def publish(event_ids: list[int]) -> bool:
    """Send one derivation task now; False (and a short backoff) when the broker is away."""
    global _skip_broker_until
    if time.monotonic() < _skip_broker_until:
        return False
    try:
        current_app.send_task(settings.LINEAGE["DERIVE_TASK"], args=[event_ids])
        return True
    except Exception as error:  # the broker is optional for ingest: never fail anything
        _skip_broker_until = time.monotonic() + settings.LINEAGE["ENQUEUE_BACKOFF_SECONDS"]
        logger.warning(
            "enqueue_failed events=%d error=%s backoff_seconds=%s",
            len(event_ids),
            type(error).__name__,
            settings.LINEAGE["ENQUEUE_BACKOFF_SECONDS"],
        )
        return False


def wait_until_published(timeout: float = 5.0) -> bool:
    """Block until the publisher has handed every queued id to the broker (tests, shutdown)."""
    return _idle.wait(timeout) and _pending.empty()

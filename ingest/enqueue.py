"""Hand newly stored events to the derivation workers, after commit, off the request path.

The commit in PostgreSQL is the acknowledgement; the broker is only a nudge. After commit,
the new event ids go into an in-process queue (microseconds); a daemon publisher thread
drains it and sends one ``catalog.derive_events`` task per burst of ids, and at most one
per ``LINEAGE["ENQUEUE_INTERVAL_MS"]``, so a busy web process publishes ten tasks per second
instead of one per request (a publish costs ~0.4-0.9 ms of CPU, docs/benchmarks.md). When Redis is
unreachable the publish fails fast (see CELERY_BROKER_TRANSPORT_OPTIONS) and the thread
backs off; events that were never published, or were lost with a killed process, are
derived by the periodic sweep.

At most one derive task waits in the broker (ADR 0053). Every derive task drains whatever
is pending, so a second waiting task would find nothing left to do; yet under load the web
processes published tasks faster than a worker could take them and the queue grew without
bound (9,827 tasks after a 10-minute soak). A publish first sets ``QUEUED_KEY`` in Redis
(``SET NX``, with a TTL); while it is set another task is already waiting and the publish is
skipped. The task deletes the key when it starts (``derive_task_started``), before it claims
anything, so an event committed after that point is published anew, and one committed
before it is pending when the task's drain looks.
"""

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from functools import partial

import redis
from celery import current_app
from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

MAX_IDS_PER_TASK = 1000
_COALESCE_SECONDS = 0.02
# Set while a derive task waits in the broker. The TTL bounds what a lost task (a flushed
# broker, a worker killed between receiving and starting it) can hold up: publishing
# resumes after it, and the sweep derives the events meanwhile.
QUEUED_KEY = "lineage:derive-task-queued"
QUEUED_TTL_SECONDS = 10
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")

_pending: "queue.SimpleQueue[list[int]]" = queue.SimpleQueue()
_publisher: threading.Thread | None = None
_publisher_pid = 0
_publisher_lock = threading.Lock()
# Hand-overs not yet published, counted under a lock: ``_idle`` is set only when the count
# falls to zero after a publish. An idle flag set by the publisher's wait timing out could
# land between a hand-over's clear and its put, and a waiter then saw "idle, queue empty"
# while the batch slept in its coalescing window, unpublished.
_in_flight = 0
_in_flight_lock = threading.Lock()
_idle = threading.Event()
_idle.set()  # nothing in flight until the first hand-over
_skip_broker_until = 0.0
_marker_client: "tuple[int, redis.Redis | None] | None" = None


def enqueue_derivation_on_commit(event_ids: Sequence[int]) -> None:
    """Schedule derivation of ``event_ids`` once the surrounding transaction commits."""
    if event_ids:
        transaction.on_commit(partial(_hand_over, list(event_ids)))


def _hand_over(event_ids: list[int]) -> None:
    global _in_flight
    _ensure_publisher()
    with _in_flight_lock:
        _in_flight += 1
        _idle.clear()
    _pending.put(event_ids)


def _published(hand_overs: int) -> None:
    global _in_flight
    with _in_flight_lock:
        _in_flight -= hand_overs
        if _in_flight <= 0:
            _in_flight = 0
            _idle.set()


def _ensure_publisher() -> None:
    # One thread per process; a forked child (web worker, Celery prefork) starts its own.
    global _publisher, _publisher_pid, _in_flight
    if _publisher is not None and _publisher_pid == os.getpid() and _publisher.is_alive():
        return
    with _publisher_lock:
        if _publisher is None or _publisher_pid != os.getpid() or not _publisher.is_alive():
            # A new thread drains what the queue holds; a batch a dead thread (or the
            # parent's, before a fork) held is not this thread's to count.
            with _in_flight_lock:
                _in_flight = _pending.qsize()
                if _in_flight == 0:
                    _idle.set()
            _publisher = threading.Thread(target=_run, name="derive-publisher", daemon=True)
            _publisher_pid = os.getpid()
            _publisher.start()


def _run() -> None:
    last_publish = 0.0
    while True:
        try:
            batch = _pending.get(timeout=1.0)
        except queue.Empty:
            continue  # never idle from here: see _in_flight
        hand_overs = 1
        # Gather for a moment, and until the process's last publish is an interval old:
        # idle, the first id goes out after _COALESCE_SECONDS; busy, one task per interval
        # carries everything that arrived in it (a publish costs ~0.4-0.9 ms of CPU).
        interval = settings.LINEAGE["ENQUEUE_INTERVAL_MS"] / 1000
        deadline = max(time.monotonic() + _COALESCE_SECONDS, last_publish + interval)
        # Asleep until then, not woken by every id: under load, a wake-up per stored event
        # costs a context switch and a GIL hand-over, taken from the request threads (a web
        # worker's context switches per event fell from 14-15 to 11-12.5 without them).
        time.sleep(max(0.0, deadline - time.monotonic()))
        while True:
            try:
                batch.extend(_pending.get_nowait())
            except queue.Empty:
                break
            hand_overs += 1
        try:
            for start in range(0, len(batch), MAX_IDS_PER_TASK):
                publish(batch[start : start + MAX_IDS_PER_TASK])
        finally:
            last_publish = time.monotonic()
            _published(hand_overs)


def publish(event_ids: list[int]) -> bool:
    """Send one derivation task now, unless one already waits in the broker (then the
    waiting task derives these events); False (and a short backoff) when the broker is away."""
    global _skip_broker_until
    if time.monotonic() < _skip_broker_until:
        return False
    marker = _marker()
    marked = False
    try:
        if marker is not None:
            if not marker.set(QUEUED_KEY, 1, nx=True, ex=QUEUED_TTL_SECONDS):
                return True
            marked = True
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
        if marked:  # no task went out: the next publish must not be skipped
            _forget_queued(marker)
        return False


def derive_task_started() -> None:
    """Called by the derive task before it claims anything: from now on, a newly committed
    event needs a new task (this one's drain may already have looked past it)."""
    _forget_queued(_marker())


def _forget_queued(marker: "redis.Redis | None") -> None:
    if marker is None:
        return
    try:
        marker.delete(QUEUED_KEY)
    except redis.RedisError as error:  # the key's TTL ends what this could not
        logger.warning("derive_marker_unreachable error=%s", type(error).__name__)


def _marker() -> "redis.Redis | None":
    """The broker's Redis, where the waiting-task key lives (None for another broker: then
    every burst is published). One client per process, as the publisher thread is."""
    global _marker_client
    if _marker_client is None or _marker_client[0] != os.getpid():
        url = settings.CELERY_BROKER_URL
        client = None
        if url.startswith(_REDIS_SCHEMES):
            options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
            client = redis.Redis.from_url(
                url,
                socket_connect_timeout=options["socket_connect_timeout"],
                socket_timeout=options["socket_timeout"],
            )
        _marker_client = (os.getpid(), client)
    return _marker_client[1]


def import_publisher_modules() -> None:
    """Import now what a process's first publish would import: Celery's AMQP support, its
    (disabled) result backend and events, and kombu's transport for the broker's scheme.

    Why: the web server imports its application before it forks (config/wsgi.py), but
    these modules were imported by each worker's first publish, in the publisher thread,
    compiling and executing them while holding the GIL the request threads wait for: 13%
    of the GIL-held samples of a worker's first seconds of batch ingest (py-spy under
    bench/ingest.py, docs/benchmarks.md), and a copy of them in every worker.
    """
    # Importing them is what this function is for (the docstring says why).
    import celery.app.amqp
    import celery.app.events
    import celery.backends.base
    import celery.events  # noqa: F401
    from kombu.transport import get_transport_cls

    # An unknown scheme: the first publish fails on it, as it did, and is logged.
    with contextlib.suppress(ImportError, KeyError, ValueError):
        get_transport_cls(settings.CELERY_BROKER_URL.split("://", 1)[0])


def wait_until_published(timeout: float = 5.0) -> bool:
    """Block until the publisher has handed every queued id to the broker (tests, shutdown)."""
    return _idle.wait(timeout) and _pending.empty()

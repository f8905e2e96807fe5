"""The process-wide collector state: the bounded queue the hooks append to, and its worker.

The calling thread's whole contribution is ``queue.append(tuple)`` after a length check or
two (an S3 or Athena call first copies the few fields the worker reads, never the call's
body): ``collections.deque.append`` is atomic under the GIL, so hooks take no lock. Everything
else (SQL parsing, naming, event building, JSON, gzip, HTTP) happens on one daemon thread,
which is rebuilt lazily in a child after ``fork`` (gunicorn ``--preload``, Celery prefork).
"""

import atexit
import os
import threading
import time
from collections import deque
from typing import Any

from lineage_collector.config import Config
from lineage_collector.errors import CollectorError, counters, logger, report
from lineage_collector.processor import Processor
from lineage_collector.transport import transport_for

# What counts lineage lost on its way out: a full queue or sender, a refusal, retries spent.
_LOST = ("queue.dropped", "events.dropped", "events.rejected", "events.dropped_after_retries")


def lost() -> int:
    """Items and events lost so far in this process (``stats()`` has them one by one)."""
    return sum(counters.values[name] for name in _LOST)


class Runtime:
    """The queue, the worker and the configuration; one instance per process (``RUNTIME``)."""

    def __init__(self) -> None:
        self.config = Config()
        self.active = False  # hooks enqueue only while True
        self.queue: deque[tuple[Any, ...]] = deque()
        self.capacity = self.config.queue_size
        self.max_statement_chars = self.config.max_statement_chars
        self.needs_start = False
        self.retry_start_at = 0.0
        self.start_lock = threading.Lock()
        self.worker: threading.Thread | None = None
        self.processor: Any = None
        self.busy = False
        self.stop_requested = threading.Event()  # the current worker's; each has its own
        self.wake = threading.Event()
        self.lost_before = 0  # lost() when the last flush (or configure) returned

    # -- calling-thread side ------------------------------------------------------------------
    def put(self, item: tuple[Any, ...]) -> bool:
        """Queue ``item``; False (and a count) when the collector is off or the queue is full."""
        if not self.active:
            return False
        if self.needs_start:
            self.start_worker()
        if len(self.queue) >= self.capacity:
            self.dropped()
            return False
        self.queue.append(item)
        return True

    def dropped(self) -> None:
        counters.bump("queue.dropped")
        if not self.config.silent_fail:
            raise CollectorError("the lineage queue is full")

    # -- lifecycle ----------------------------------------------------------------------------
    def configure(self, config: Config) -> None:
        self.stop_worker(timeout=config.exit_flush_timeout)
        self.config = config
        self.capacity = config.queue_size
        self.max_statement_chars = config.max_statement_chars
        self.queue = deque()
        self.processor = Processor(config, transport_for(config))
        self.active = not config.disabled
        self.needs_start = self.active
        self.retry_start_at = 0.0
        self.lost_before = lost()
        if self.active:
            flush_at_child_exit()

    def start_worker(self) -> None:
        """Start the worker thread (once per process; called lazily from :meth:`put`).

        Called from the hooks, after the host's statement or S3 call succeeded, so it must not
        raise: a thread that cannot start ("can't start new thread" at a process limit, or at
        interpreter shutdown on Python 3.12+) is counted, and tried again a second later.
        """
        # Two threads can both see needs_start before either clears it (the first lineage
        # of a server's threads after start-up or fork): one worker only, as the processor
        # has no locks. Taken only on this rare path, never on the hooks' hot path.
        with self.start_lock:
            if self.needs_start:
                self._start_worker()

    def _start_worker(self) -> None:
        now = time.monotonic()
        if now < self.retry_start_at:
            return
        self.needs_start = False
        # The worker is given its own queue, processor and stop flag: one that outlives
        # stop_worker's bounded join (stuck in a slow send) must finish with what it had,
        # never drain the queue of the next configuration into the old transport.
        stop = threading.Event()
        worker = threading.Thread(
            target=self._run,
            args=(self.queue, self.processor, stop),
            name="lineage-collector",
            daemon=True,
        )
        try:
            worker.start()
        except Exception as error:
            self.needs_start = self.active
            self.retry_start_at = now + 1.0
            report("worker.start", error, strict=not self.config.silent_fail)
            return
        self.worker, self.stop_requested = worker, stop

    def stop_worker(self, timeout: float) -> None:
        """Flush and stop the worker, waiting ``timeout`` seconds in all (not once for the
        flush and again for the join: a worker stuck in a slow send held uninstall() and a
        second install() twice the exit flush's bound). A worker that outlives the wait
        ends on its own, with its own queue and processor."""
        worker = self.worker
        self.active = False
        if worker is not None and worker.is_alive():
            deadline = time.monotonic() + timeout
            self.flush(timeout)
            self.stop_requested.set()
            self.wake.set()
            worker.join(timeout=max(deadline - time.monotonic(), 0.0))
        self.worker = None
        if self.processor is not None:
            try:
                self.processor.close()
            except Exception as error:
                report("close", error)

    def after_fork_in_child(self) -> None:
        """The parent's thread does not exist here: start afresh, without its queued items."""
        self.queue = deque()
        self.worker = None
        self.busy = False
        self.wake = threading.Event()
        self.start_lock = threading.Lock()  # a parent's thread may have held it at fork
        self.needs_start = self.active
        try:
            if self.processor is not None:
                self.processor = self.processor.fresh_copy()
        except Exception as error:
            # An exception in a fork handler is printed and dropped by Python, leaving the
            # rest undone: here the child goes on without lineage instead of with the
            # parent's connection.
            self.active = self.needs_start = False
            report("fork", error)

    # -- worker side --------------------------------------------------------------------------
    def _run(self, queue: deque[tuple[Any, ...]], processor: Any, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                worked = self._drain(queue, processor)
                processor.maybe_send(time.monotonic())
                if not worked:
                    self.wake.wait(0.05)
                    self.wake.clear()
            except Exception as error:  # the worker must survive anything
                report("worker", error)
                time.sleep(0.05)

    def _drain(self, queue: deque[tuple[Any, ...]], processor: Any) -> bool:
        worked = False
        for _ in range(1000):  # yield to sending regularly under a flood
            self.busy = True
            try:
                item = queue.popleft()
            except IndexError:
                break
            worked = True
            try:
                processor.handle(item)
            except Exception as error:
                report("process", error)
        self.busy = False
        return worked

    def idle(self, until: float | None = None) -> bool:
        """Nothing queued or in hand, and nothing the sender can send before ``until``."""
        processor = self.processor
        return not self.queue and not self.busy and (processor is None or processor.idle(until))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait up to ``timeout`` s until everything queued is sent; True when it all was.

        False also when anything since the last flush (or configure) was lost instead of
        sent: dropped by a full queue or sender, refused by the catalog, or given up on
        after its retries (a catalog that is down for the whole flush costs a batch its
        three tries within a few seconds, and the flush then found nothing left to wait for).
        """
        if self.processor is None:
            return True
        if self.worker is None or not self.worker.is_alive():
            if self.needs_start and self.queue:
                self.start_worker()
            elif not self.queue and self.processor.idle():
                return self._nothing_lost()
        deadline = time.monotonic() + timeout
        self.processor.flush_requested = True
        while time.monotonic() < deadline:
            # A retry due before the deadline is waited for: one transient error must not
            # end the flush (at exit, lose the last batch) a quarter of a second early.
            if self.idle(until=deadline):
                break
            self.wake.set()
            time.sleep(0.005)
        done = not self.queue and not self.busy and self.processor.sent_everything()
        done = self._nothing_lost() and done
        self.processor.flush_requested = False
        if not self.config.silent_fail and counters.first_error is not None:
            error = counters.first_error
            counters.first_error = None
            raise CollectorError(f"lineage collection failed: {error}") from error
        return done

    def _nothing_lost(self) -> bool:
        """Nothing lost since the last call (a counters.reset() in between loses nothing)."""
        now = lost()
        nothing = now <= self.lost_before
        self.lost_before = now
        return nothing


RUNTIME = Runtime()


def _exit_flush() -> None:
    # Bounded: a catalog that is down must not hold the process at exit.
    if RUNTIME.active and RUNTIME.worker is not None:
        try:
            RUNTIME.flush(RUNTIME.config.exit_flush_timeout)
        except Exception as error:
            logger.debug("lineage_collector.exit_flush_failed error=%s", error)


_children_flushed = False


def flush_at_child_exit() -> None:
    """A ``multiprocessing`` child started by fork (a ``Process``, a ``Pool``'s workers, and
    Celery's prefork workers: billiard 4 uses multiprocessing's finalizers) ends with
    ``os._exit()``, which runs no ``atexit`` handler: its last events (a job run as a
    ``Process`` target: all of them) were lost. multiprocessing's exit finalizers do run
    there; one is registered in each such child, after the child clears the parent's.
    Imported here, on install, not with the collector: it is ~30 ms of imports."""
    global _children_flushed
    if _children_flushed:
        return
    # Here, on install, not with the collector: ~30 ms of imports an application that never
    # installs it should not pay (the docstring above).
    import multiprocessing.util

    def register_in_child(runtime: Runtime) -> None:
        multiprocessing.util.Finalize(None, _exit_flush, exitpriority=0)

    multiprocessing.util.register_after_fork(RUNTIME, register_in_child)
    _children_flushed = True


atexit.register(_exit_flush)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=RUNTIME.after_fork_in_child)

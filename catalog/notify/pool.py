"""A bounded pool of sending threads with a bound per receiver host (ADR 0086).

``run`` sends items grouped by host with at most ``size`` threads, at most ``per_host`` of
them busy with one host at once. A thread takes the next item of any host under its bound,
so a slow receiver holds at most ``per_host`` threads and never the items of other hosts
queued behind its own (no head-of-line blocking). Each thread closes its own database
connection when the pool is done with it (Django's connections are per thread).
"""

import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import TypeVar

from django.db import connections

Result = TypeVar("Result")


class _Work:
    def __init__(self, by_host: dict[str, list[str]], per_host: int) -> None:
        self.pending = {host: deque(items) for host, items in by_host.items()}
        self.busy: Counter[str] = Counter()
        self.per_host = per_host
        self.changed = threading.Condition()

    def take(self) -> tuple[str, str] | None:
        """The next item of a host under its bound, waiting while every host with items
        left is at its bound; None when nothing is left."""
        with self.changed:
            while True:
                left = [host for host, items in self.pending.items() if items]
                if not left:
                    return None
                for host in left:
                    if self.busy[host] < self.per_host:
                        self.busy[host] += 1
                        return host, self.pending[host].popleft()
                self.changed.wait()

    def done(self, host: str) -> None:
        with self.changed:
            self.busy[host] -= 1
            self.changed.notify_all()


def run(
    by_host: dict[str, list[str]],
    send: Callable[[str], Result],
    size: int,
    per_host: int,
) -> tuple[dict[str, Result], list[BaseException]]:
    """``send(item)`` for every item, on at most ``size`` threads, at most ``per_host`` at
    once per host; each item's answer, and the exceptions raised (the other items go on)."""
    work = _Work(by_host, max(1, per_host))
    answers: dict[str, Result] = {}
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            while (taken := work.take()) is not None:
                host, item = taken
                try:
                    answers[item] = send(item)
                except Exception as error:
                    errors.append(error)
                finally:
                    work.done(host)
        finally:
            connections.close_all()

    count = min(max(1, size), sum(len(items) for items in by_host.values()))
    threads = [threading.Thread(target=loop, name=f"webhook-{n}") for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers, errors

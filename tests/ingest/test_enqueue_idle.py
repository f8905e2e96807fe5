"""``wait_until_published`` answers True only once every handed-over id went to the broker.

The publisher's wait for work times out every second. It used to set the idle flag there,
and a timeout landing between a hand-over's clear of that flag and its put left the flag
set while the batch slept in its coalescing window: a waiter saw "idle, queue empty" with
nothing published (a test that checks the sent task failed once in a fresh clone).
"""

import queue
import threading
import time

import pytest

from ingest import enqueue


class _TimeoutBetweenClearAndPut(queue.SimpleQueue):
    """The publisher's wait times out (quickly, as here) after a hand-over cleared the
    idle flag and before its put: the interleaving the old code got wrong."""

    def __init__(self) -> None:
        super().__init__()
        self.timed_out = threading.Event()

    def get(self, block: bool = True, timeout: float | None = None):
        try:
            return super().get(block, 0.01 if timeout is not None else None)
        except queue.Empty:
            self.timed_out.set()
            raise

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        self.timed_out.clear()
        assert self.timed_out.wait(5), "the publisher's wait never timed out"
        time.sleep(0.05)  # and its timeout handler has run
        super().put(item, block, timeout)


@pytest.fixture
def sent(monkeypatch, no_task_waiting) -> list[list[int]]:
    published: list[list[int]] = []
    # Slow publishes: the waiter must not answer while one is still under way.
    monkeypatch.setattr(
        enqueue.current_app,
        "send_task",
        lambda name, args: (time.sleep(0.05), published.append(args[0])),
    )
    monkeypatch.setattr(enqueue, "_COALESCE_SECONDS", 0.3)
    # Every burst published (no waiting-task marker): this is about the idle flag alone.
    monkeypatch.setattr(enqueue, "_marker", lambda: None)
    enqueue._ensure_publisher()
    return published


def test_a_wait_timeout_between_a_hand_over_and_its_put_does_not_answer_idle(
    monkeypatch, sent
) -> None:
    monkeypatch.setattr(enqueue, "_pending", _TimeoutBetweenClearAndPut())
    enqueue._hand_over([101, 102])
    deadline = time.monotonic() + 0.2
    while not enqueue._pending.empty() and time.monotonic() < deadline:
        time.sleep(0.005)  # the publisher takes the batch...
    assert enqueue._pending.empty()
    # ...which now sleeps in its 0.3-s coalescing window: not published, so not idle.
    assert not enqueue.wait_until_published(timeout=0.1)
    assert sent == []
    assert enqueue.wait_until_published(timeout=5)
    assert sent == [[101, 102]]


def test_hand_overs_during_a_publish_keep_the_waiter_waiting_until_all_are_sent(sent) -> None:
    threads = [threading.Thread(target=enqueue._hand_over, args=([n],)) for n in range(1, 41)]
    for thread in threads:
        thread.start()
        time.sleep(0.01)  # some arrive while an earlier burst is being published
    for thread in threads:
        thread.join()
    assert enqueue.wait_until_published(timeout=10)
    assert sorted(event_id for batch in sent for event_id in batch) == list(range(1, 41))
    assert enqueue._in_flight == 0

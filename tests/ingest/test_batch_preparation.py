"""A batch's preparation with less CPU (ADR 0145) decides as before:

- ``_may_nest_past`` counts a large body's brackets in its first part first: the same
  answer as counting them all;
- a batch prepared with the collector paused still keeps the exact JSON of the events
  jsonb cannot hold (``payload_raw``);
- ``collector_paused`` nests, across threads too, and leaves the collector as it found it.
"""

import gc
import random
import threading
from collections.abc import Iterator

import pytest

from core.heap import collector_paused
from ingest import parsing
from ingest.models import Event
from tests.ingest.helpers import BATCH, post_json, run_event


@pytest.mark.parametrize("size", [10, parsing._COUNTED_PREFIX - 3, parsing._COUNTED_PREFIX + 7])
def test_the_first_part_counted_answers_as_the_whole_count(size: int) -> None:
    rng = random.Random(size)
    for _ in range(200):
        brackets = rng.randint(0, 140)
        body = bytearray(b" " * size)
        for _ in range(brackets):  # anywhere: in the first part, the rest, or astride
            body[rng.randrange(size)] = ord(rng.choice("{[]}"))
        data = bytes(body)
        for max_depth in (0, 1, 32, 64, 65, 100):
            whole = data.count(b"{") + data.count(b"[") > max_depth
            assert parsing._may_nest_past(data, max_depth) is whole


@pytest.mark.django_db
def test_a_batch_keeps_the_raw_json_of_the_events_that_need_it(ingest_client) -> None:
    plain = run_event(run={"runId": "3e5d12d6-0838-4013-a6a0-7dd1306f0ebd"})
    exponent = run_event()
    exponent["run"]["facets"] = {"x_stats": {"rows": 1e300}}
    nul = run_event()
    nul["job"] = {"namespace": "tests", "name": "job", "facets": {"x": {"note": "a\x00b"}}}
    assert post_json(ingest_client, BATCH, [plain, exponent, nul]).status_code == 200
    by_run = {event.run_id: event for event in Event.objects.all()}
    assert by_run[plain["run"]["runId"]].payload_raw is None
    for event in (exponent, nul):
        stored = by_run[event["run"]["runId"]]
        assert stored.payload_raw is not None
        assert stored.received_payload == event


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was:
            gc.disable()


def test_the_collector_runs_again_when_the_last_pause_ends(collector_on: None) -> None:
    inner_entered, outer_may_end = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other_thread() -> None:
        with collector_paused():
            inner_entered.set()
            outer_may_end.wait(5)
        seen.append(gc.isenabled())

    with collector_paused():
        assert not gc.isenabled()
        thread = threading.Thread(target=other_thread)
        thread.start()
        assert inner_entered.wait(5)
    assert not gc.isenabled()  # the other thread's pause is still in progress
    outer_may_end.set()
    thread.join(5)
    assert seen == [True] and gc.isenabled()


def test_a_process_without_the_collector_is_left_without_it(collector_on: None) -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError
    assert not gc.isenabled()

"""A batch's preparation with less CPU (ADR 0145) decides as before:

- ``_may_nest_past`` counts a large body's brackets in its first part first: the same
  answer as counting them all;
- a batch prepared by the view's one pass (``_prepared``) still keeps the exact JSON of the
  events jsonb cannot hold (``payload_raw``).
"""

import random

import pytest

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

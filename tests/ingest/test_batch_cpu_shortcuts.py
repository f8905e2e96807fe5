"""A batch's CPU shortcuts (ADR 0107) give the same verdicts as the work they skip.

- ``parse_json`` takes a compact batch from orjson, its depth bounded from orjson's
  indented output (ADR 0096; an item-by-item write was measured and dropped, ADR 0107);
- ``has_exponent_number`` first looks for the shape an exponent leaves and runs the exact
  check only where it is;
- ``facet_problems`` keys the facets it remembers by their JSON, or a digest when large.
"""

import json
import random

import orjson
import pytest
from django.conf import settings

from core.problems import Problem
from ingest import facets as facets_module
from ingest import parsing
from ingest.facets import facet_problems
from ingest.parsing import _DECODER, check_depth, parse_json
from ingest.services import canonical_json, has_exponent_number
from tests.ingest.test_cpu_shortcuts import GOOD_JOB_TYPE, typed

MAX_DEPTH = settings.LINEAGE["MAX_JSON_DEPTH"]


def verdict(body: bytes) -> object:
    try:
        return typed(parse_json(body))
    except Problem as problem:
        return problem.slug


def reference(body: bytes) -> object:
    """What the slow path decides: the walk for depth, then the stdlib decoder."""
    try:
        check_depth(orjson.loads(body), MAX_DEPTH)
    except Problem as problem:
        return problem.slug
    except orjson.JSONDecodeError:
        return "invalid-json"
    try:
        return typed(_DECODER.decode(body.decode()))
    except ValueError:
        return "invalid-json"


def nested(levels: int) -> object:
    value: object = 1
    for index in range(levels):
        value = {"n": value} if index % 2 else [value]
    return value


@pytest.mark.parametrize("levels", [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 3])
def test_an_item_at_and_around_the_limit(levels: int) -> None:
    # The array is one level: its item may nest MAX_DEPTH - 1 more.
    body = orjson.dumps([{"a": 1}, nested(levels), "[[{{"])
    expected = "ok" if levels + 1 <= MAX_DEPTH else "too-deep"
    got = verdict(body)
    assert (got if isinstance(got, str) else "ok") == expected
    assert verdict(body) == reference(body)


def test_random_batches_get_the_slow_paths_verdict() -> None:
    rng = random.Random(107)
    scalars = [0, -1, 2**63 - 1, 2**64 - 1, 2**70, 1.25, 3e-9, 1e300, "x", "é", "[{", None]

    def grow(depth_left: int) -> object:
        if depth_left == 0 or rng.random() < 0.3:
            return rng.choice(scalars)
        if rng.random() < 0.5:
            return [grow(depth_left - 1) for _ in range(rng.randint(0, 3))]
        return {f"k{rng.randint(0, 4)}": grow(depth_left - 1) for _ in range(rng.randint(0, 3))}

    verdicts = []
    for _ in range(300):
        items = [grow(rng.randint(0, 6)) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            items.insert(rng.randint(0, len(items)), nested(rng.randint(MAX_DEPTH - 3, MAX_DEPTH)))
        text = json.dumps(items, separators=(",", ":"), ensure_ascii=False)
        if rng.random() < 0.2:  # a duplicate key spliced in, compact as the rest
            text = text.replace('{"k', '{"k9":0,"k9":1,"k', 1)
        if rng.random() < 0.2:  # not compact: never taken from orjson
            text = text.replace(",", ", ", 1)
        body = text.encode()
        verdicts.append(reference(body))
        assert verdict(body) == verdicts[-1], body[:200]
    # Every kind of answer was drawn: the test compares, it does not only pass.
    assert {"too-deep", "invalid-json"} <= {v for v in verdicts if isinstance(v, str)}
    assert sum(not isinstance(v, str) for v in verdicts) > 100


def test_a_compact_batch_is_taken_from_orjson_unwalked(monkeypatch) -> None:
    def forbidden(*args: object) -> object:
        raise AssertionError("the shortcut was not taken")

    events = [{"eventType": "START", "run": {"runId": f"r{index}"}} for index in range(50)]
    monkeypatch.setattr(parsing, "check_depth", forbidden)
    monkeypatch.setattr(parsing, "_DECODER", forbidden)
    assert parse_json(orjson.dumps(events) + b"\n") == events


@pytest.mark.parametrize(
    "text",
    [b"1e5", b"[1.5E-7]", b'{"a":"i.e., x"}', b'{"a":"x:1e5,"}', b'{"a":[1,2.5,-3]}', b"[]"],
)
def test_the_exponent_shape_cases(text: bytes) -> None:
    assert has_exponent_number(text) is any(
        "e" in number.lower() for number in _numbers_written(text)
    )


def _numbers_written(text: bytes) -> list[str]:
    numbers: list[str] = []
    json.loads(text, parse_float=lambda number: numbers.append(number) or float(number))
    return numbers


def test_every_float_written_is_told_apart() -> None:
    """Floats of every magnitude, as orjson and the stdlib write them, beside strings that
    hold the shape or not: the first look never hides an exponent."""
    rng = random.Random(7)
    for _ in range(3000):
        value = rng.choice([-1, 1]) * rng.random() * 10.0 ** rng.randint(-330, 308)
        noise = "".join(rng.choice(["e", "E", "1", ".", ",", ":", "[", "}", "-"]) for _ in range(5))
        document = {noise: [value, noise], "n": rng.randint(-(10**20), 10**20)}
        for text in (canonical_json(document), json.dumps(document, separators=(",", ":"))):
            text = text if isinstance(text, bytes) else text.encode()
            expected = any("e" in number.lower() for number in _numbers_written(text))
            assert has_exponent_number(text) is expected, text


def test_a_small_facet_is_remembered_by_its_json(empty_cache) -> None:
    assert facet_problems("job", {"jobType": GOOD_JOB_TYPE}, "/job/facets") == []
    assert empty_cache == {orjson.dumps(["job", "jobType", GOOD_JOB_TYPE])}


def test_a_large_facet_is_remembered_by_a_digest(empty_cache) -> None:
    large = {**GOOD_JOB_TYPE, "extra": "x" * facets_module._KEPT_WHOLE_MAX}
    assert facet_problems("job", {"jobType": large}, "/job/facets") == []
    (key,) = empty_cache
    assert key.startswith(b"\x00") and len(key) == 17
    assert facet_problems("job", {"jobType": large}, "/job/facets") == []
    changed = {**large, "integration": 7}
    assert facet_problems("job", {"jobType": changed}, "/job/facets")


def test_the_memory_is_bounded_in_bytes(empty_cache, monkeypatch) -> None:
    monkeypatch.setattr(facets_module, "_KNOWN_VALID_BYTES", 1000)
    for index in range(20):
        facet = {**GOOD_JOB_TYPE, "integration": f"ENGINE{index}"}
        assert facet_problems("job", {"jobType": facet}, "/job/facets") == []
        assert sum(len(key) for key in empty_cache) <= 1000 + 400
    assert facets_module._known_valid_bytes[0] == sum(len(key) for key in empty_cache)

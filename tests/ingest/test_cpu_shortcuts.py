"""The ingest path's CPU shortcuts (issue 14) give the same verdicts as the work they skip.

- ``parse_json`` walks a document for depth only when its body holds more "{" and "["
  bytes than the limit allows levels: below that it cannot be too deep.
- ``facet_problems`` remembers facets found valid by content and skips checking them
  again; invalid facets are checked (and reported) every time.
"""

import json
import random

import pytest
from django.conf import settings

from core.problems import Problem
from ingest import facets as facets_module
from ingest.facets import facet_problems
from ingest.parsing import check_depth, parse_json

MAX_DEPTH = settings.LINEAGE["MAX_JSON_DEPTH"]


def nested(levels: int, leaf: object = 1) -> object:
    value = leaf
    for index in range(levels - 1):
        value = {"n": value} if index % 2 else [value]
    return {"n": value}


def verdict(body: bytes) -> str:
    try:
        parse_json(body)
    except Problem as problem:
        return problem.slug
    return "ok"


def walked_verdict(document: object) -> str:
    try:
        check_depth(document, MAX_DEPTH)
    except Problem as problem:
        return problem.slug
    return "ok"


@pytest.mark.parametrize("levels", [1, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH * 2])
def test_depth_at_and_around_the_limit(levels: int) -> None:
    import orjson

    document = nested(levels)
    expected = "ok" if levels <= MAX_DEPTH else "too-deep"
    assert verdict(orjson.dumps(document)) == expected
    assert walked_verdict(document) == expected


def test_brackets_inside_strings_only_make_the_walk_run() -> None:
    import orjson

    shallow = {"text": "[{" * MAX_DEPTH, "list": [1, [2]]}
    assert verdict(orjson.dumps(shallow)) == "ok"
    deep_with_strings = nested(MAX_DEPTH + 1, leaf="[[{")
    assert verdict(orjson.dumps(deep_with_strings)) == "too-deep"


def test_random_documents_get_the_walks_verdict() -> None:
    """Documents of every depth from 1 to past the limit, each a path of random lists and
    objects down to that depth with small random branches beside it (leaves include "[{"
    strings, which raise the bracket count without nesting). Random trees grown level by
    level (the test before) almost never reached the limit except by growing to thousands
    of nodes, which made this one test 16 CPU seconds; a path of chosen depth reaches every
    depth near the limit in a few hundred nodes."""
    import orjson

    rng = random.Random(14)

    def leaf() -> object:
        return rng.choice([1, "s", None, "[{", "]}", [], {}])

    def branch(depth_left: int) -> object:
        if depth_left == 0 or rng.random() < 0.5:
            return leaf()
        children = [branch(depth_left - 1) for _ in range(rng.randint(0, 2))]
        return children if rng.random() < 0.5 else {f"b{i}": c for i, c in enumerate(children)}

    def path(depth: int) -> object:
        """A container nesting exactly ``depth`` levels (with its branches) below it."""
        if depth == 0:
            return leaf()
        siblings = [branch(rng.randint(0, 3)) for _ in range(rng.randint(0, 2))]
        siblings.insert(rng.randint(0, len(siblings)), path(depth - 1))
        if rng.random() < 0.5:
            return siblings
        return {f"k{index}": value for index, value in enumerate(siblings)}

    verdicts = []
    for _ in range(400):
        document = {"root": path(rng.randint(0, MAX_DEPTH + 8))}
        verdicts.append(walked_verdict(document))
        assert verdict(orjson.dumps(document)) == verdicts[-1]
    # Both verdicts were drawn, many times: the test compares, it does not only pass.
    assert verdicts.count("ok") > 100 and verdicts.count("too-deep") > 20


GOOD_JOB_TYPE = {
    "_producer": "https://example.com/producer",
    "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json",
    "processingType": "BATCH",
    "integration": "SPARK",
    "jobType": "JOB",
}


def test_a_valid_facet_is_remembered_and_stays_valid(empty_cache) -> None:
    assert facet_problems("job", {"jobType": GOOD_JOB_TYPE}, "/job/facets") == []
    assert len(empty_cache) == 1
    assert facet_problems("job", {"jobType": dict(GOOD_JOB_TYPE)}, "/job/facets") == []


def test_an_invalid_facet_is_reported_every_time(empty_cache) -> None:
    bad = {**GOOD_JOB_TYPE, "processingType": 7}
    first = facet_problems("job", {"jobType": bad}, "/job/facets")
    second = facet_problems("job", {"jobType": bad}, "/job/facets")
    assert first and first == second
    assert not empty_cache


def test_a_change_to_a_remembered_facet_is_checked_again(empty_cache) -> None:
    assert facet_problems("job", {"jobType": GOOD_JOB_TYPE}, "/job/facets") == []
    changed = {**GOOD_JOB_TYPE, "integration": ["not", "a", "string"]}
    assert facet_problems("job", {"jobType": changed}, "/job/facets")


def test_the_same_content_elsewhere_is_not_taken_as_checked(empty_cache) -> None:
    # Remembered as a job facet; under another key or position it meets another schema.
    assert facet_problems("job", {"jobType": GOOD_JOB_TYPE}, "/job/facets") == []
    assert facet_problems("run", {"parent": GOOD_JOB_TYPE}, "/run/facets")


def test_the_memory_is_bounded(empty_cache, monkeypatch) -> None:
    monkeypatch.setattr(facets_module, "_KNOWN_VALID_MAX", 3)
    for index in range(10):
        facet = {**GOOD_JOB_TYPE, "integration": f"ENGINE{index}"}
        assert facet_problems("job", {"jobType": facet}, "/job/facets") == []
        assert len(empty_cache) <= 3


def test_integers_beyond_64_bits_are_checked_uncached(empty_cache) -> None:
    facet = {**GOOD_JOB_TYPE, "extra": 2**70}
    assert facet_problems("job", {"jobType": facet}, "/job/facets") == []
    assert not empty_cache


# --- parse_json takes orjson's document only when it is the one sent (issue 42) ----------


def stdlib_verdict(body: bytes) -> object:
    """What the stdlib decoder alone builds (duplicate keys refused), with every type."""
    from ingest.parsing import _DECODER

    try:
        return typed(_DECODER.decode(body.decode()))
    except ValueError:
        return "invalid-json"


def typed(value: object) -> object:
    """``value`` with each scalar's type beside it: 1 and 1.0 must not compare equal."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed(item) for item in value]
    return (type(value).__name__, value)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a":1,"a":2}',  # compact, a duplicate orjson would resolve silently
        b'{"a":{"b":1,"c":{"b":2,"b":2}}}',  # the same value twice, deep down
        b'[{"k":1},{"k":1,"k":1}]',
        b'{"big":123456789012345678901234567890}',  # orjson: a float
        b'{"neg":-9223372036854775809}',
        b'{"u64":18446744073709551615,"i64":-9223372036854775808}',
        b'{"f":1.5,"g":0.1,"h":-0.0,"i":1.0,"j":1e5,"k":1E-7}',
        b'{"s":"\\u00e9\\n\\"\\\\\\/","t":"\xc3\xa9"}',
        b'{"a":1}\n',
        b' {"a" : [1, 2] } ',
        b'{"":{"":[]}}',
    ],
)
def test_orjsons_document_is_taken_only_when_exact(body: bytes) -> None:
    try:
        got: object = typed(parse_json(body))
    except Problem as problem:
        got = problem.slug
    assert got == stdlib_verdict(body)


def test_random_compact_documents_parse_as_the_stdlib_builds_them() -> None:
    rng = random.Random(42)
    scalars = [0, -1, 2**63 - 1, 2**64 - 1, 2**70, -(2**65), 1.25, 3e-9, "x", "é", None, True]

    def grow(depth_left: int) -> object:
        if depth_left == 0 or rng.random() < 0.3:
            return rng.choice(scalars)
        if rng.random() < 0.5:
            return [grow(depth_left - 1) for _ in range(rng.randint(0, 3))]
        return {f"k{rng.randint(0, 4)}": grow(depth_left - 1) for _ in range(rng.randint(0, 3))}

    for _ in range(300):
        text = json.dumps({"root": grow(6)}, separators=(",", ":"), ensure_ascii=False)
        if rng.random() < 0.3:  # a duplicate key spliced in, compact as the rest
            text = text.replace('{"root":', '{"root":0,"root":', 1)
        body = text.encode()
        try:
            got: object = typed(parse_json(body))
        except Problem as problem:
            got = problem.slug
        assert got == stdlib_verdict(body)


def test_a_compact_event_is_taken_from_orjson() -> None:
    """The shortcut is taken for what the Java and Spark clients send: compact JSON."""
    from ingest.parsing import _exact

    body = json.dumps({"eventType": "START", "run": {"runId": "r"}}, separators=(",", ":"))
    assert _exact(json.loads(body), body.encode())
    assert not _exact(json.loads(body), body.replace(",", ", ").encode())

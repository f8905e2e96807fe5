"""``has_exponent_number`` finds every number written with an exponent, and nothing else.

The oracle is the stdlib parser, which hands every number with a fraction or an exponent
to ``parse_float`` exactly as it is written.
"""

import json
import random
from pathlib import Path

import pytest

from ingest.services import canonical_json, has_exponent_number

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage"


def written_with_exponent(text: bytes) -> bool:
    numbers: list[str] = []
    json.loads(text, parse_float=lambda number: numbers.append(number) or float(number))
    return any("e" in number.lower() for number in numbers)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"a":1e16}', True),
        (b'{"a":1.5e-7}', True),
        (b"[1E5]", True),
        (b'{"a":-2e+20}', True),  # how the stdlib writes it (integers beyond 64 bits)
        (b'{"a":[true,1e3]}', True),
        (b'{"a":"x\\\\","b":1e5}', True),  # an escaped backslash ends the string
        (b'{"a":"1e5"}', False),
        (b'{"a":"x\\"1e5"}', False),  # an escaped quote does not end it
        (b'{"a":"x\\\\\\"1e5"}', False),
        (b'{"a":true,"b":false,"c":null}', False),
        (b'{"e":1,"E":2.5}', False),
        (b'{"runId":"3e5d12d6-0838-4013-a6a0-7dd1306f0ebd"}', False),
        (b'{"a":"\\u00e9e"}', False),
        (b"{}", False),
    ],
)
def test_cases(text: bytes, expected: bool) -> None:
    assert written_with_exponent(text) is expected  # the oracle agrees with the case
    assert has_exponent_number(text) is expected


def test_every_fixture_event() -> None:
    checked = 0
    for path in sorted(FIXTURES.rglob("*.json")):
        try:
            document = json.loads(path.read_bytes())
        except ValueError:  # a few fixtures hold several documents or none
            continue
        canonical = canonical_json(document)
        assert has_exponent_number(canonical) is written_with_exponent(canonical), path
        checked += 1
    assert checked > 100


def _value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([1e-300, 2.5e-5, 0.0001, 1.5, 1e15, 1e16, 3e300, -7e22, 0.1])
    if kind == 1:
        return rng.choice([0, -1, 2**63, 10**30, 12345])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4):
        return "".join(rng.choice(['"', "\\", "e", "E", "1", "x", ":", ",", "é"]) for _ in range(6))
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ("e", "a\\", 'b"', "1e5", "true")
    return {rng.choice(keys): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_random_documents() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        canonical = canonical_json(_value(rng))
        assert has_exponent_number(canonical) is written_with_exponent(canonical), canonical

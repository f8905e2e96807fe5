"""Objects and arrays written in text are redacted whole after a secret key (issue 38, item 8).

Text holds structures: a JSON document cut short (a dead letter's kept prefix), JSON inside
a JSON string, a Python dict in an error message or a log line. The value of a secret key
there was redacted up to its first blank, so ``{"password": {"nested": "x y"}}`` showed
``"x y"}}``. Now the value is the whole object or array, to its closing bracket, or to the
end of the text when the text is cut short.
"""

import time

import pytest

from core.redaction import REDACTED, redact, redact_text

R = REDACTED
SHAPES = [
    ('{"password": {"nested": "x y"}}', f'{{"password": "{R}"}}'),
    ('{"secrets": ["a", "b c"], "u": 1}', f'{{"secrets": "{R}", "u": 1}}'),
    ('{"token": 12345, "u": 1}', f'{{"token": {R}, "u": 1}}'),
    ('{"a": 1, "credentials": {"deep": ["x", {"y": "z', f'{{"a": 1, "credentials": "{R}"'),
    ("{'password': {'nested': 'x'}} is not a string", f"{{'password': '{R}'}} is not a string"),
    ("{'token': [\"it's\", '}'], 'u': 1}", f"{{'token': '{R}', 'u': 1}}"),
    ('{"api_key": [{"a": "]"}, "x"], "u": 2}', f'{{"api_key": "{R}", "u": 2}}'),
    ('{"password":\n  {"x": "y"},\n "u": 3}', f'{{"password":\n  "{R}",\n "u": 3}}'),
    # JSON escaped inside a JSON string, whole and cut short.
    (
        '{"c": "{\\"password\\": {\\"v\\": \\"x y\\"}, \\"u\\": 1}"}',
        f'{{"c": "{{\\"password\\": {R}, \\"u\\": 1}}"}}',
    ),
    (
        '{"c": "{\\"pwd\\": \\"x y\\", \\"u\\": 1}"}',
        f'{{"c": "{{\\"pwd\\": \\"{R}\\", \\"u\\": 1}}"}}',
    ),
    ('{"c": "{\\"secret\\": {\\"v\\": \\"x', f'{{"c": "{{\\"secret\\": {R}'),
    # Quoted values keep escaped quotes inside; a value never closed hides the rest.
    ('{"password": "a\\"b c", "u": 4}', f'{{"password": "{R}", "u": 4}}'),
    ('{"password": "a b c', f'{{"password": {R}'),
    ("password='it''s x' user=u", f"password='{R}' user=u"),
]


@pytest.mark.parametrize(("text", "expected"), SHAPES)
def test_objects_and_arrays_after_a_secret_key_in_text_are_redacted_whole(text, expected) -> None:
    assert redact_text(text) == expected
    assert redact({"message": text}) == {"message": expected}


HOSTILE = [
    '{"password": ' + "{" * 1_000_000,
    '{"password": [' * 71_429,
    "password:{'" * 90_910,
    '\\"password\\": \\"' * 62_500,
    "pwd=[" + '"\\' * 500_000,
    "token: {" + "'" * 1_000_000,
    '"secret": "' + "\\" * 1_000_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_walking_a_structure_in_text_is_linear(text) -> None:
    """Each character of a structure is read once (strings skipped whole by a possessive
    pattern), and no key inside it starts another walk: 10x the text, about 10x the time."""

    def seconds(value: str) -> float:
        # The thread's CPU, not the wall: the work is what grows, and on a loaded machine
        # (load 20-30) a preempted wall-clock run of the large text made 1.38 s of 0.034.
        best = float("inf")
        for _ in range(3):
            started = time.thread_time()
            redact_text(value)
            best = min(best, time.thread_time() - started)
        return best

    assert len(text) >= 1_000_000
    large, small = seconds(text), seconds(text[:100_000])
    assert large < 10.0, f"{large:.2f}s for 1 MB"
    assert large < 40 * max(small, 0.005), (large, small)

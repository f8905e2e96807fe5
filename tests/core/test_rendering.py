"""core.rendering.JSONRenderer writes what DRF's JSONRenderer writes, with orjson."""

import datetime as dt
import json
import uuid
import zoneinfo
from decimal import Decimal

import pytest
from django.utils.functional import lazy
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer as DRFRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from core.rendering import JSONRenderer, compact

UTC = dt.UTC
SAMPLE = {
    "text": 'plain, ünïcödé, emoji 🚀, quotes " and \\ and control \x01 \n',
    "separators": "a\u2028b\u2029c",
    "numbers": [0, -1, 2**63 - 1, -(2**63), 1.5, 0.1, -2.25, 3600.0, True, False, None],
    "times": [
        dt.datetime(2026, 11, 1, 1, 2, 3, tzinfo=UTC),
        dt.datetime(2026, 11, 1, 1, 2, 3, 123456, tzinfo=zoneinfo.ZoneInfo("UTC")),
        dt.datetime(2026, 11, 1, 1, 2, 3, tzinfo=dt.timezone(dt.timedelta(0))),
        dt.datetime(2026, 11, 1, 1, 2, 3, 5, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
        dt.datetime(2026, 11, 1, 1, 2, 3),
        dt.date(2026, 11, 1),
        dt.time(1, 2, 3, 400),
    ],
    "others": [uuid.UUID(int=7), Decimal("1.25"), dt.timedelta(seconds=90), b"bytes"],
    "lazy": lazy(lambda: "translated", str)(),
    "keys": {1: "int key", None: "none key", 2.5: "float key"},
    "nested": ReturnDict(
        {"list": ReturnList([{"a": {"b": [[], {}]}}], serializer=None)}, serializer=None
    ),
    "set": {3},
    "": "empty key",
}


def test_a_rich_answer_is_byte_for_byte_drfs():
    assert JSONRenderer().render(SAMPLE) == DRFRenderer().render(SAMPLE)
    # What the Marquez graph renders each node with (ADR 0129).
    assert compact(SAMPLE) == DRFRenderer().render(SAMPLE)


@pytest.mark.parametrize(
    "value",
    [
        2**64,  # beyond orjson's integers
        json.loads("[" * 300 + "]" * 300),  # beyond its depth
        {"at": dt.time(1, 2, tzinfo=UTC)},  # DRF refuses an aware time; so must we
    ],
    ids=["big-int", "deep", "aware-time"],
)
def test_what_orjson_refuses_is_drfs_answer(value):
    try:
        expected = DRFRenderer().render(value)
    except ValueError as error:
        with pytest.raises(type(error)):
            JSONRenderer().render(value)
        with pytest.raises(type(error)):
            compact(value)
    else:
        assert JSONRenderer().render(value) == expected
        assert compact(value) == expected


def test_indent_and_nothing_are_drfs():
    assert JSONRenderer().render(SAMPLE, "application/json; indent=2") == DRFRenderer().render(
        SAMPLE, "application/json; indent=2"
    )
    assert JSONRenderer().render(None) == DRFRenderer().render(None) == b""


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.datetimes(timezones=st.just(UTC) | st.none()),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_answer_reads_back_the_same(value):
    """Floats in exponent form are the one textual difference (1e-7 for 1e-07): the
    documents are equal once read, and equal byte for byte without floats."""
    value = {"answer": value}  # None alone renders as no body at all
    ours, drf = JSONRenderer().render(value), DRFRenderer().render(value)
    assert json.loads(ours) == json.loads(drf)
    if not _has_float(value):
        assert ours == drf


def _has_float(value) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(_has_float(item) for item in value)
    if isinstance(value, dict):
        return any(_has_float(item) for item in value.values())
    return False

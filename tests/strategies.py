"""Hypothesis strategies that generate events from the OpenLineage JSON Schema itself.

A small generator for the subset of JSON Schema the spec's core file uses ($ref, allOf,
object properties/required/additionalProperties, arrays, enums, string formats date-time,
uuid and uri), so the fuzz tests follow the spec file rather than a hand-written copy.
Facet maps get extra keys that are not standard facet names (standard facets have their
own schemas, exercised by the corpus tests).
"""

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

SCHEMA = orjson.loads(
    (
        Path(__file__).resolve().parent.parent / "ingest" / "schemas" / "OpenLineage.json"
    ).read_bytes()
)
DEFINITIONS = SCHEMA["$defs"]

# Any JSON value, small: unicode text (including U+0000), big integers, finite floats.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
facet_keys = st.text(min_size=1, max_size=10).map(lambda key: f"x_{key}")


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = DEFINITIONS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _merge(schema: dict[str, Any]) -> dict[str, Any]:
    """Flatten allOf into one object schema."""
    schema = _resolve(schema)
    if "allOf" not in schema:
        return schema
    merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    for part in schema["allOf"]:
        part = _merge(part)
        merged["properties"].update(part.get("properties", {}))
        merged["required"].extend(part.get("required", []))
        if "additionalProperties" in part:
            merged["additionalProperties"] = part["additionalProperties"]
    return merged


def _string(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    fmt = schema.get("format")
    if fmt == "date-time":
        return st.datetimes(
            min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
        ).map(lambda moment: moment.isoformat())
    if fmt == "uuid":
        return st.uuids().map(str)
    if fmt == "uri":
        return st.text(alphabet="abcdefghij/-_", max_size=12).map(
            lambda tail: f"https://example.com/{tail}"
        )
    return st.text(max_size=30)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    schema = _merge(schema)
    kind = schema.get("type")
    if kind == "string" or "enum" in schema:
        return _string(schema)
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {})), max_size=2)
    if kind == "integer":
        return st.integers()
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "object" or "properties" in schema:
        return _object(schema)
    return json_values


def _object(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = {
        key: from_schema(value)
        for key, value in properties.items()
        if key in schema.get("required", [])
    }
    optional = {key: from_schema(value) for key, value in properties.items() if key not in required}
    extra = schema.get("additionalProperties")
    base = st.fixed_dictionaries(required, optional=optional)
    if isinstance(extra, dict):
        extras = st.dictionaries(facet_keys, from_schema(extra), max_size=2)
        return st.tuples(base, extras).map(lambda pair: {**pair[1], **pair[0]})
    return base


run_events = from_schema({"$ref": "#/$defs/RunEvent"})
dataset_events = from_schema({"$ref": "#/$defs/DatasetEvent"})
job_events = from_schema({"$ref": "#/$defs/JobEvent"})
any_event = st.one_of(run_events, dataset_events, job_events)

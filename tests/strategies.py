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


# Issue 26's shapes for the order-independence property: JobEvents declaring static lineage
# (a few jobs, so newer and older declarations of one job meet, equal eventTimes too),
# DatasetEvents, and run events carrying run facts (statistics, quality metrics).
_JOBS = [("dbt://analytics", "model_a"), ("dbt://analytics", "model_b")]
_DATASETS = [("postgres://warehouse:5432", f"shop.s.t{index}") for index in range(4)]
_RUNS = ["0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9f01", "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9f02"]
_FACET = {"_producer": "https://example.com/p", "_schemaURL": "https://example.com/s"}


def _time(minute: int) -> str:
    return f"2026-03-01T10:{minute:02d}:00Z"


def _ref(dataset: tuple[str, str], **extra: Any) -> dict[str, Any]:
    return {"namespace": dataset[0], "name": dataset[1], **extra}


def _job_event(
    job: tuple[str, str], minute: int, inputs: list, outputs: list, columns: bool
) -> dict[str, Any]:
    facets = {}
    if columns and inputs:
        source = {**_ref(inputs[0]), "field": "id", "transformations": [{"type": "DIRECT"}]}
        facets = {"columnLineage": {**_FACET, "fields": {"id": {"inputFields": [source]}}}}
    return {
        "eventTime": _time(minute),
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": job[0], "name": job[1]},
        "inputs": [_ref(item) for item in inputs],
        "outputs": [_ref(item, facets=facets) for item in outputs],
    }


def _dataset_event(dataset: tuple[str, str], minute: int, text: str) -> dict[str, Any]:
    return {
        "eventTime": _time(minute),
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": _ref(dataset, facets={"documentation": {**_FACET, "description": text}}),
    }


def _run_facts_event(run: str, minute: int, rows: int, dataset: tuple[str, str]) -> dict:
    statistics = {**_FACET, "rowCount": rows, "size": rows * 10}
    metrics = {**_FACET, "rowCount": rows, "columnMetrics": {"id": {"nullCount": rows % 3}}}
    return {
        "eventType": "COMPLETE" if minute % 2 else "RUNNING",
        "eventTime": _time(minute),
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "spark", "name": "export"},
        "inputs": [_ref(_DATASETS[0], inputFacets={"dataQualityMetrics": metrics})],
        "outputs": [_ref(dataset, outputFacets={"outputStatistics": statistics})],
    }


_minutes = st.integers(0, 4)
_dataset_lists = st.lists(st.sampled_from(_DATASETS), max_size=3, unique=True)
static_and_run_fact_events = st.lists(
    st.one_of(
        st.builds(
            _job_event,
            st.sampled_from(_JOBS),
            _minutes,
            _dataset_lists,
            _dataset_lists,
            st.booleans(),
        ),
        st.builds(_dataset_event, st.sampled_from(_DATASETS), _minutes, st.sampled_from("xyz")),
        st.builds(
            _run_facts_event,
            st.sampled_from(_RUNS),
            _minutes,
            st.integers(0, 3),
            st.sampled_from(_DATASETS),
        ),
    ),
    min_size=2,
    max_size=10,
)


# Issue 31: runs of one task that START, FAIL, ABORT or COMPLETE in any order, with or
# without their inputs and outputs, some sharing a table: which of them count as writes.
_STATE_RUNS = [f"00000000-0000-4000-8000-0000000031{n:02d}" for n in range(3)]


def _state_event(
    run: str, state: str, minute: int, inputs: list, outputs: list, bare: bool
) -> dict:
    if bare:  # the state alone (producers often list the datasets on START only)
        inputs, outputs = [], []
    return {
        "eventType": state,
        "eventTime": _time(minute),
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run},
        "job": {"namespace": "airflow", "name": "report_dag.insert_report"},
        "inputs": [_ref(item) for item in inputs],
        "outputs": [_ref(item) for item in outputs],
    }


run_state_events = st.lists(
    st.builds(
        _state_event,
        st.sampled_from(_STATE_RUNS),
        st.sampled_from(["START", "RUNNING", "COMPLETE", "FAIL", "ABORT"]),
        _minutes,
        _dataset_lists,
        _dataset_lists,
        st.booleans(),
    ),
    min_size=2,
    max_size=8,
)


@st.composite
def planned_and_completed_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Issue 31's last shape: per run of one task, a START listing more outputs than its
    COMPLETE names (Airflow's ``DROP TABLE IF EXISTS``), a COMPLETE naming none of them
    (``outputs: []`` or no key) or a FAIL, and sometimes a RUNNING naming some: which
    outputs count as writes."""
    events = []
    for run in _STATE_RUNS[: draw(st.integers(1, 3))]:
        planned = draw(st.lists(st.sampled_from(_DATASETS), min_size=1, max_size=3, unique=True))
        named = draw(st.none() | st.lists(st.sampled_from(planned), max_size=2, unique=True))
        inputs = draw(st.lists(st.sampled_from(_DATASETS), max_size=2, unique=True))
        minute = draw(_minutes)
        events.append(_state_event(run, "START", minute, inputs, planned, False))
        end = draw(st.sampled_from(["COMPLETE", "COMPLETE", "FAIL"]))
        ended = _state_event(run, end, minute + draw(st.integers(0, 2)), inputs, named or [], False)
        if named is None:
            del ended["outputs"]
        events.append(ended)
        if draw(st.booleans()):
            touched = draw(st.lists(st.sampled_from(planned), max_size=2, unique=True))
            events.append(_state_event(run, "RUNNING", minute, [], touched, False))
    return events

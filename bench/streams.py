"""Event streams for the derivation benchmarks, each a function (start, count) → events.

Every stream is deterministic: event ``i`` is the same whatever the chunking, so a curve
can store chunk after chunk and a profile can re-create "the same 500 events".

- ``shared-datasets``: the corpus's Spark events (2-4 KB, schema and column-lineage facets), four
  events per run (START, RUNNING, RUNNING, COMPLETE), 97 jobs over the same few datasets.
- ``fleet``: a scheduled fleet; 50 jobs each re-run for years over their own two inputs and
  one output (three events per run, column lineage on the output). At a million events
  every edge carries ~6,700 runs.
- ``hot``: a hot table; 300 jobs each read their own table and write the same
  ``warehouse.events`` table (two events per run, column lineage on the output).
- ``declared``: the fleet with static lineage and run facts (issue 26): output statistics
  and input quality metrics/assertions on every COMPLETE, and a JobEvent with column
  lineage that redeclares the job (alternating inputs) in every tenth run's slot.
- ``scheduled``: events of about 1.3 KB (the size under PostgreSQL's TOAST threshold that
  issue 42 quotes): 200 scheduled jobs, each run a child of its DAG's run (parent facet),
  one input and one output with schemas, no column lineage; two events per run.
"""

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import orjson

from bench.common import DEFAULT_CORPUS, load_templates

Stream = Callable[[int, int], list[dict[str, Any]]]
START = datetime(2016, 1, 1, tzinfo=UTC)
PRODUCER = "https://github.com/lineage-catalog/bench"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/x.json"}


def _uuid(stream: int, run: int) -> str:
    return str(uuid.UUID(int=(stream << 96) | run, version=4))


@cache
def _templates() -> list[dict[str, Any]]:
    return load_templates(DEFAULT_CORPUS)


def shared(start: int, count: int) -> list[dict[str, Any]]:
    templates = _templates()
    kinds = ["START", "RUNNING", "RUNNING", "COMPLETE"]
    events = []
    for index in range(start, start + count):
        event = orjson.loads(orjson.dumps(templates[index % len(templates)]))
        event["run"]["runId"] = _uuid(1, index // 4)
        event["eventType"] = kinds[index % 4]
        event["eventTime"] = (START + timedelta(seconds=index)).isoformat()
        base = event["job"]["name"].rsplit(".", 1)[0]
        event["job"]["name"] = f"{base}.{index // 4 % 97}"
        events.append(event)
    return events


def _schema(names: list[str]) -> dict[str, Any]:
    return {**FACET, "fields": [{"name": name, "type": "STRING"} for name in names]}


def _columns(inputs: list[tuple[str, str]]) -> dict[str, Any]:
    fields = {}
    for column in ("id", "value", "updated_at"):
        fields[column] = {
            "inputFields": [
                {
                    "namespace": namespace,
                    "name": name,
                    "field": column,
                    "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                }
                for namespace, name in inputs
            ]
        }
    return {**FACET, "fields": fields}


def _run_event(
    kind: str,
    run_id: str,
    time: datetime,
    job: str,
    inputs: list[tuple[str, str]],
    output: tuple[str, str],
) -> dict[str, Any]:
    columns = ["id", "value", "updated_at"]
    return {
        "eventType": kind,
        "eventTime": time.isoformat(),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": {}},
        "job": {"namespace": "scheduler", "name": job, "facets": {}},
        "inputs": [
            {"namespace": namespace, "name": name, "facets": {"schema": _schema(columns)}}
            for namespace, name in inputs
        ],
        "outputs": [
            {
                "namespace": output[0],
                "name": output[1],
                "facets": {"schema": _schema(columns), "columnLineage": _columns(inputs)},
            }
        ],
    }


def fleet(start: int, count: int, jobs: int = 50) -> list[dict[str, Any]]:
    kinds = ["START", "RUNNING", "COMPLETE"]
    events = []
    for index in range(start, start + count):
        run = index // 3
        job = run % jobs
        # Every job runs once per "hour" of its own schedule; the store spans years.
        time = START + timedelta(hours=run // jobs, seconds=index % 3 * 60 + job)
        inputs = [("postgres://db:5432", f"src.orders_{job}"), ("s3://lake", f"ref/dim_{job}")]
        output = ("s3://lake", f"mart/fact_{job}")
        events.append(
            _run_event(kinds[index % 3], _uuid(2, run), time, f"etl.{job}", inputs, output)
        )
    return events


def hot(start: int, count: int, jobs: int = 300) -> list[dict[str, Any]]:
    kinds = ["START", "COMPLETE"]
    events = []
    for index in range(start, start + count):
        run = index // 2
        job = run % jobs
        time = START + timedelta(minutes=run // jobs * 10, seconds=index % 2 * 30 + job)
        inputs = [("kafka://broker:9092", f"topic_{job}")]
        output = ("s3://lake", "warehouse/events")
        events.append(
            _run_event(kinds[index % 2], _uuid(3, run), time, f"writer.{job}", inputs, output)
        )
    return events


JOB_EVENT_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"


def _job_event(time: datetime, job: str, inputs: list[tuple[str, str]], output: tuple[str, str]):
    return {
        "eventTime": time.isoformat(),
        "producer": PRODUCER,
        "schemaURL": JOB_EVENT_SCHEMA_URL,
        "job": {"namespace": "scheduler", "name": job, "facets": {}},
        "inputs": [{"namespace": namespace, "name": name} for namespace, name in inputs],
        "outputs": [
            {
                "namespace": output[0],
                "name": output[1],
                "facets": {"columnLineage": _columns(inputs)},
            }
        ],
    }


def declared(start: int, count: int, jobs: int = 50) -> list[dict[str, Any]]:
    """The fleet, with static lineage and run facts (issue 26): each run's three events
    carry output statistics and input quality metrics on COMPLETE, and every tenth run's
    slot is a JobEvent that declares the job again (a deploy), alternating between two
    input sets, so declarations keep replacing each other."""
    kinds = ["START", "RUNNING", "COMPLETE"]
    events = []
    for index in range(start, start + count):
        run = index // 3
        job = run % jobs
        time = START + timedelta(hours=run // jobs, seconds=index % 3 * 60 + job)
        inputs = [("postgres://db:5432", f"src.orders_{job}"), ("s3://lake", f"ref/dim_{job}")]
        output = ("s3://lake", f"mart/fact_{job}")
        if run // jobs % 10 == 0 and index % 3 == 1:  # a deploy instead of the RUNNING
            version = [("s3://lake", f"ref/dim_{job}_v{run // jobs // 10 % 2}")]
            events.append(_job_event(time, f"etl.{job}", inputs[:1] + version, output))
            continue
        event = _run_event(kinds[index % 3], _uuid(4, run), time, f"etl.{job}", inputs, output)
        if index % 3 == 2:
            rows = run * 7 % 100_000
            event["outputs"][0]["outputFacets"] = {
                "outputStatistics": {**FACET, "rowCount": rows, "size": rows * 120}
            }
            event["inputs"][0]["inputFacets"] = {
                "dataQualityMetrics": {
                    **FACET,
                    "rowCount": rows,
                    "columnMetrics": {"id": {"nullCount": 0, "distinctCount": rows}},
                },
                "dataQualityAssertions": {
                    **FACET,
                    "assertions": [{"assertion": "not_null", "success": True, "column": "id"}],
                },
            }
        events.append(event)
    return events


def scheduled(start: int, count: int, jobs: int = 200) -> list[dict[str, Any]]:
    kinds = ["START", "COMPLETE"]
    events = []
    for index in range(start, start + count):
        run = index // 2
        job = run % jobs
        time = START + timedelta(hours=run // jobs, seconds=index % 2 * 90 + job)
        inputs = [("postgres://db:5432", f"src.orders_{job}")]
        event = _run_event(
            kinds[index % 2], _uuid(5, run), time, f"dag_{job % 20}.task_{job}", inputs,
            ("s3://lake", f"mart/daily_{job}"),
        )  # fmt: skip
        del event["outputs"][0]["facets"]["columnLineage"]
        event["run"]["facets"]["parent"] = {
            **FACET,
            "run": {"runId": _uuid(6, run // 20)},
            "job": {"namespace": "airflow", "name": f"dag_{job % 20}"},
        }
        events.append(event)
    return events


STREAMS: dict[str, Stream] = {
    "shared-datasets": shared,
    "fleet": fleet,
    "hot": hot,
    "declared": declared,
    "scheduled": scheduled,
}


def records(stream: str, start: int, count: int) -> list[Any]:
    """Validated ingest records of events ``start`` .. ``start + count - 1`` of ``stream``."""
    from ingest.validation import validate_openlineage

    return [validate_openlineage(event) for event in STREAMS[stream](start, count)]

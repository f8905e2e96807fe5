"""Catalog rows as Marquez's objects (Namespace, Job, Run, Dataset, DatasetVersion).

Each builder takes a page of rows and reads what else it shows through the catalog's read
services (catalog.reads), a fixed handful of queries whatever the page size (the pinned
counts in tests/marquez prove it), so lists, details and graph nodes
share one shape. Field names follow Marquez's published OpenAPI document and what its UI
reads; values the catalog does not have are Marquez's empty values (``[]``, ``{}``, null).
Facets come from events: they go through the one redaction function like every read path.
"""

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from catalog.facets import data_source, documentation, schema, source_code_location, tags
from catalog.lineage import column_lineage
from catalog.models import Dataset, Job, Run
from catalog.reads import jobs as job_reads
from catalog.reads import marquez_graph
from catalog.reads import runs as run_reads
from core.redaction import redact

# Marquez's run states from OpenLineage's event types (ADR 0021 decides ours).
RUN_STATE = {
    "START": "RUNNING",
    "RUNNING": "RUNNING",
    "COMPLETE": "COMPLETED",
    "FAIL": "FAILED",
    "ABORT": "ABORTED",
    "OTHER": "NEW",
    "UNKNOWN": "NEW",
}
OUR_STATES: dict[str, list[str]] = defaultdict(list)
for _ours, _theirs in RUN_STATE.items():
    OUR_STATES[_theirs].append(_ours)

LATEST_RUNS = 10  # Marquez's latestRuns
RELATED_LIMIT = 200  # inputs/outputs and column lineage per object (invariant 7)
STREAM_SCHEMES = ("kafka://", "pulsar://", "kinesis://", "pubsub://", "eventhub://")
# A stable UUID namespace for the versions this catalog does not keep (job versions).
_VERSIONS = uuid.UUID("6b1f0a52-3c1e-5d7a-9a4e-0c2f7b8d9e10")
# And for the jobs' UUIDs Marquez names a parent job by (``parentJobUuid``): the catalog's job
# ids are integers, and a stable UUID from the name is the same on every read.
_JOBS = uuid.UUID("024d3df9-c882-45d4-9acc-c6db9fcef2c5")


def ts(value: datetime | str | None) -> str | None:
    """A moment as Marquez writes it; text is one PostgreSQL already wrote so (the graph's
    and pages' rows, ``core.sql_timestamps``, ADR 0129)."""
    if value is None or isinstance(value, str):
        return value
    return value.isoformat().replace("+00:00", "Z")


def _uuid5(space: bytes, text: str) -> str:
    """``str(uuid.uuid5(space, text))`` at a fifth of its cost: a 200-node graph names a
    version per job and per latest run, and ``uuid.UUID`` builds an object for each
    (tests/marquez/test_shapes_fast.py holds the two equal)."""
    digest = bytearray(hashlib.sha1(space + text.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    hexed = digest.hex()
    return f"{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def _redacted(facets: Any) -> Any:
    """``redact(facets)``; an empty document (most nodes' facets) has nothing to redact and
    is given as a new empty one, as ``redact`` gives it, without the walk's set-up."""
    if not facets and type(facets) in (dict, list):
        return type(facets)()
    return redact(facets)


def _tag_names(entries: Any) -> list[str]:
    """``tags.marquez_names(entries)``: none for no tags (most nodes'), without the call."""
    return tags.marquez_names(entries) if entries else []


def job_version(namespace: str, name: str) -> str:
    """The catalog keeps one current version of a job: a stable id derived from its name."""
    return _uuid5(_VERSIONS.bytes, f"{namespace}\0{name}")


def job_uuid(namespace: str, name: str) -> str:
    """A job's stable UUID on the mount, derived from its name (``parentJobUuid``)."""
    return _uuid5(_JOBS.bytes, f"{namespace}\0{name}")


def job_type(job: Job | marquez_graph.JobRow) -> str:
    return "STREAM" if job.processing_type.upper().startswith("STREAM") else "BATCH"


def dataset_type(namespace: str) -> str:
    return "STREAM" if namespace.lower().startswith(STREAM_SCHEMES) else "DB_TABLE"


# --- runs -----------------------------------------------------------------------------


def run_data(
    run: Run | job_reads.LatestRun, namespace: str, name: str, version: str | None = None
) -> dict[str, Any]:
    """A Marquez Run; ``version``: its job's (``job_version``), when the caller has it."""
    duration = run.duration
    return {
        "id": str(run.run_uuid),
        "createdAt": ts(run.first_event_time or run.started_at),
        "updatedAt": ts(run.last_event_time or run.updated_at),
        "nominalStartTime": ts(run.nominal_start_time),
        "nominalEndTime": ts(run.nominal_end_time),
        "state": RUN_STATE.get(run.state, "NEW"),
        "startedAt": ts(run.started_at),
        "endedAt": ts(run.ended_at),
        "durationMs": int(duration.total_seconds() * 1000) if duration is not None else None,
        "args": {},
        "jobVersion": {
            "namespace": namespace,
            "name": name,
            "version": version or job_version(namespace, name),
        },
        "facets": _redacted(run.facets),
    }


def runs_data(runs: list[Run]) -> list[dict[str, Any]]:
    """Runs (``job`` selected) with the dataset versions they read and wrote (one query).

    A dataset version is the completed run that wrote it, so an output's version is this
    run's id; a run that wrote nothing (failed, aborted, not ended: catalog.models.writes, ADR
    0069) has no output versions, as in Marquez, which versions outputs only on completion,
    and a completed run only those its COMPLETE named when it named any (``run_datasets``
    reads writes only). An input's version is not tracked and is null.
    """
    by_run: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: {"input": [], "output": []}
    )
    read = run_reads.run_datasets([run.id for run in runs], RELATED_LIMIT)
    uuids = {run.id: str(run.run_uuid) for run in runs}
    for key in read.links:
        run_id, direction, namespace, name = key
        by_run[run_id][direction].append(
            {
                "datasetVersionId": {
                    "namespace": namespace,
                    "name": name,
                    "version": uuids[run_id] if direction == "output" else None,
                },
                # The run's input/output facets of that dataset, as Marquez attaches them:
                # statistics, data quality metrics and assertions (ADR 0061).
                "facets": redact(read.facets.get(key, {})),
            }
        )
    answer = []
    for run in runs:
        data = run_data(run, run.job.namespace, run.job.name)
        data["inputDatasetVersions"] = by_run[run.id]["input"]
        data["outputDatasetVersions"] = by_run[run.id]["output"]
        answer.append(data)
    return answer


# --- jobs -----------------------------------------------------------------------------


def jobs_data(
    jobs: Sequence[Job | marquez_graph.JobRow],
    latest_runs: int = LATEST_RUNS,
    facts: marquez_graph.JobFacts | None = None,
) -> list[dict[str, Any]]:
    """Jobs (``parent`` selected) with latestRun, latestRuns (≤10), inputs and outputs:
    two queries for the whole page. ``latest_runs=1``: latestRun only (graph nodes, as
    Marquez's lineage graph gives them), which keeps a 200-node graph cheap. ``facts``:
    their ``job_facts`` (``job_facts_args_of_ids``), when the caller read them already."""
    if facts is None:
        ids = [job.id for job in jobs]
        facts = marquez_graph.job_facts(*job_facts_args_of_ids(ids, latest_runs))
    io = {
        job_id: {
            direction: [{"namespace": namespace, "name": name} for namespace, name in named]
            for direction, named in links.items()
        }
        for job_id, links in facts.datasets.items()
    }
    answer = [
        _job(job, facts.latest_runs[job.id], io.get(job.id) or {"input": [], "output": []})
        for job in jobs
    ]
    if latest_runs < LATEST_RUNS:
        for data in answer:
            del data["latestRuns"]
    return answer


def job_facts_args_of_ids(ids: list[int], latest_runs: int) -> tuple[list[int], int, int]:
    """What ``jobs_data`` reads ``marquez_graph.job_facts`` with for the jobs of these ids:
    the ids, runs and limit."""
    return ids, latest_runs, RELATED_LIMIT * max(len(ids), 1)


def _parent(job: Job | marquez_graph.JobRow) -> tuple[str, str] | None:
    """The parent's (namespace, name): a row has it read; a ``Job`` its ``parent`` selected."""
    if isinstance(job, marquez_graph.JobRow):
        return job.parent
    return (job.parent.namespace, job.parent.name) if job.parent_id and job.parent else None


def _job(
    job: Job | marquez_graph.JobRow,
    runs: list[job_reads.LatestRun],
    io: dict[str, list[dict[str, str]]],
) -> dict[str, Any]:
    facets = _redacted(job.facets)
    parent = _parent(job)
    # No facets (most jobs): no description or location in them.
    described = documentation.description(facets) if facets else None
    version = job_version(job.namespace, job.name)
    run_shapes = [run_data(run, job.namespace, job.name, version) for run in runs]
    return {
        "id": {"namespace": job.namespace, "name": job.name},
        "type": job_type(job),
        "name": job.name,
        "simpleName": job.name.rsplit(".", 1)[-1],
        "parentJobName": parent[1] if parent else None,
        "parentJobUuid": job_uuid(*parent) if parent else None,
        "createdAt": ts(job.first_seen),
        "updatedAt": ts(job.last_seen or job.updated_at),
        "namespace": job.namespace,
        "inputs": io["input"],
        "outputs": io["output"],
        "location": source_code_location.url(facets) if facets else None,
        "description": job.description or described or None,
        "latestRun": run_shapes[0] if run_shapes else None,
        "latestRuns": run_shapes,
        "tags": _tag_names(job.tags),
        "facets": facets,
        "currentVersion": version,
    }


# --- datasets -------------------------------------------------------------------------


def datasets_data(
    datasets: Sequence[Dataset | marquez_graph.DatasetRow],
    read: tuple[marquez_graph.DatasetFacts, column_lineage.ColumnLineage] | None = None,
) -> list[dict[str, Any]]:
    """Datasets with schema fields, column lineage, lastModifiedAt and currentVersion:
    two queries for the whole page (the fields and newest writes one, ADR 0116). ``read``:
    their ``dataset_facts`` and column lineage into them (``column_lineage_limit``), when
    the caller read them already."""
    ids = [dataset.id for dataset in datasets]
    # Most datasets have no tags, and their fields none: a new empty list each, as read.
    field_tags = {
        dataset.id: tags.marquez_field_names(dataset.tags) for dataset in datasets if dataset.tags
    }
    if read is None:
        read = (
            marquez_graph.dataset_facts(ids),
            column_lineage.into(ids, column_lineage_limit(ids), currency_too=False),
        )
    facts, into = read
    fields = {
        dataset_id: _fields(rows, field_tags.get(dataset_id))
        for dataset_id, rows in facts.fields.items()
    }
    lineage: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for edge in into.edges:
        entries = lineage[edge.target_id][edge.target_field]
        entry = input_field(edge)
        if entry not in entries:  # one per transformation Marquez can tell apart
            entries.append(entry)
    # The newest write of each dataset: its time is lastModifiedAt, its run the current
    # version (a dataset version is the run that wrote it, see dataset_versions).
    latest = facts.latest_writes
    no_write = (None, None)
    return [
        dataset_data(
            dataset,
            fields.get(dataset.id, []),
            [{"name": name, "inputFields": inputs} for name, inputs in lineage[dataset.id].items()]
            if dataset.id in lineage
            else [],
            *latest.get(dataset.id, no_write),
        )
        for dataset in datasets
    ]


def column_lineage_limit(dataset_ids: list[int]) -> int:
    """How many column edges ``datasets_data`` reads into these datasets."""
    return RELATED_LIMIT * max(len(dataset_ids), 1)


def _fields(
    rows: list[tuple[str, str, str]], tagged: dict[str, list[str]] | None
) -> list[dict[str, Any]]:
    """A dataset's schema fields as Marquez lists them; ``tagged``: its fields' tags."""
    if tagged is None:
        return [
            {"name": name, "type": kind or None, "tags": [], "description": description or None}
            for name, kind, description in rows
        ]
    return [
        {
            "name": name,
            "type": kind or None,
            "tags": tagged.get(name, []),
            "description": description or None,
        }
        for name, kind, description in rows
    ]


def dataset_data(
    dataset: Dataset | marquez_graph.DatasetRow,
    fields: list[dict[str, Any]],
    column_lineage: list[dict[str, Any]],
    last_modified: datetime | str | None,
    current_version: str | None,
) -> dict[str, Any]:
    facets = _redacted(dataset.facets)
    source = data_source.source_name(facets) if facets else None
    return {
        "id": {"namespace": dataset.namespace, "name": dataset.name},
        "type": dataset_type(dataset.namespace),
        "name": dataset.name,
        "physicalName": dataset.name,
        "createdAt": ts(dataset.first_seen),
        "updatedAt": ts(dataset.last_seen or dataset.updated_at),
        "namespace": dataset.namespace,
        "sourceName": source if isinstance(source, str) and source else dataset.namespace,
        "fields": fields,
        "tags": _tag_names(dataset.tags),
        "lastModifiedAt": ts(last_modified),
        "lastLifecycleState": dataset.lifecycle_state or None,
        "lifecycleState": dataset.lifecycle_state or None,
        "description": dataset.description or None,
        "facets": facets,
        "currentVersion": current_version,
        "columnLineage": column_lineage,
        "deleted": dataset.is_dropped,
    }


def schema_fields(facets: dict[str, Any], dataset: Dataset) -> list[dict[str, Any]]:
    """Fields of an event's schema dataset facet, as Marquez lists them, with the
    dataset's column tags."""
    return schema.marquez_fields(facets, tags.marquez_field_names(dataset.tags))


# --- column lineage -------------------------------------------------------------------


def input_field(edge: column_lineage.ColumnEdge) -> dict[str, Any]:
    """One input of a field, as Marquez lists it (its per-input transformation)."""
    return {
        "namespace": edge.source_namespace,
        "dataset": edge.source_name,
        "field": edge.source_field,
        "transformationDescription": edge.transformation_description or None,
        "transformationType": edge.transformation_type or None,
    }


def field_lineage(edges: list[column_lineage.ColumnEdge]) -> dict[str, Any]:
    """A field node's transformation and inputs from its column edges (the catalog's read):
    the producer's own field-level form when it sent one, else the first input's, as
    Marquez does; every input with its own transformation, once each."""
    own = next(
        (e for e in edges if e.field_transformation_type or e.field_transformation_description),
        None,
    )
    if own is not None:
        kind, description = own.field_transformation_type, own.field_transformation_description
    else:
        kind, description = edges[0].transformation_type, edges[0].transformation_description
    inputs: list[dict[str, Any]] = []
    for edge in edges:
        entry = {**input_field(edge), "datasetVersion": None}
        entry = {key: entry[key] for key in _INPUT_ORDER}
        if entry not in inputs:
            inputs.append(entry)
    return {
        "transformationDescription": description or None,
        "transformationType": kind or None,
        "inputFields": inputs,
    }


_INPUT_ORDER = (
    "namespace",
    "dataset",
    "datasetVersion",
    "field",
    "transformationDescription",
    "transformationType",
)

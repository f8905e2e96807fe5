"""Catalog rows built directly (no derivation), for read-API tests on hand-built graphs."""

import hashlib
import itertools
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import connection

from catalog.models import (
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    DatasetField,
    Job,
    JobDataset,
    JobLineageEdge,
    JobLineageEdgeRun,
    LineageEdge,
    LineageEdgeRun,
    MetadataRecord,
    Run,
    RunDataset,
)
from catalog.models.writes import is_write
from catalog.names import naming
from ingest.models import Event

T0 = datetime(2026, 11, 1, tzinfo=UTC)
_counter = itertools.count(1)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def make_job(name: str | None = None, namespace: str = "airflow", **fields: Any) -> Job:
    name = name or f"job_{next(_counter)}"
    fields.setdefault("is_placeholder", False)
    fields.setdefault("first_seen", T0)
    fields.setdefault("last_seen", T0)
    return Job.objects.create(
        namespace=namespace, name=name, key_hash=naming.key_hash(namespace, name), **fields
    )


def make_dataset(
    name: str | None = None, namespace: str = "postgres://db:5432", **fields: Any
) -> Dataset:
    name = name or f"shop.public.table_{next(_counter)}"
    fields.setdefault("first_seen", T0)
    fields.setdefault("last_seen", T0)
    dataset = Dataset.objects.create(namespace=namespace, name=name, **fields)
    add_alias(dataset, namespace, name, reason="event")
    return dataset


def add_symlink_aliases(dataset: Dataset, count: int) -> None:
    """``count`` symlink aliases of ``dataset``, by SQL (tests of tens of thousands), their
    ids against their name order (the newest alias sorts first), so that neither id nor
    insertion order passes for the name order."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,"
            " reason_version, first_seen, last_seen, dataset_id, is_table_name)"
            " SELECT 'hive://meta:9083', 'snap_' || lpad((%s - g)::text, 6, '0'),"
            " sha256(('snap' || g)::bytea), 'symlink', 'symlinks', '[]', now(), now(), %s, false"
            " FROM generate_series(1, %s) g ORDER BY g",
            [count, dataset.id, count],
        )


def add_runs_of_job(job_id: int, count: int = 2000) -> None:
    """``count`` completed runs of a job, by SQL, each its own text runId (``batch-N``): a
    table where neither a scan of the runs nor of the job's runs is a cheap way to a run."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,"
            " state_version, error_message, is_streaming, facets, facet_versions, job_version,"
            " updated_at, shares_run_id, tags)"
            " SELECT gen_random_uuid(), 'batch-' || i, %s, false, 'COMPLETE', '[]', '', false,"
            " '{}', '{}', '[]', now(), false, '[]' FROM generate_series(1, %s) AS i",
            [job_id, count],
        )


def add_alias(
    dataset: Dataset, namespace: str, name: str, reason: str = "symlink", detail: str = ""
) -> DatasetAlias:
    return DatasetAlias.objects.create(
        dataset=dataset,
        namespace=namespace,
        name=name,
        key_hash=naming.key_hash(namespace, name),
        reason=reason,
        reason_detail=detail,
        first_seen=T0,
        last_seen=T0,
    )


def add_fields(dataset: Dataset, *names: str) -> None:
    DatasetField.objects.bulk_create(
        DatasetField(dataset=dataset, ordinal=index, name=name, type="varchar")
        for index, name in enumerate(names)
    )


def make_run(job: Job, state: str = "COMPLETE", started: datetime = T0, **fields: Any) -> Run:
    run_uuid = fields.pop("run_uuid", uuid.uuid4())
    return Run.objects.create(
        run_uuid=run_uuid,
        # A runId that is no UUID is kept as sent, as derivation keeps it (its uuid5 key is
        # ``run_uuid``): Run.objects.named finds such runs by it (ADR 0183).
        run_id_text=fields.pop("run_id_text", str(run_uuid)),
        job=job,
        state=state,
        is_placeholder=False,
        started_at=started,
        first_event_time=started,
        last_event_time=started + timedelta(minutes=5),
        **fields,
    )


def make_edge(
    source: Dataset,
    target: Dataset,
    job: Job,
    first: datetime = T0,
    last: datetime | None = None,
    runs: list[Run] | None = None,
) -> LineageEdge:
    """An edge with one LineageEdgeRun per run (a new run at ``first`` when none given)."""
    last = last or first
    runs = runs if runs is not None else [make_run(job, started=first)]
    edge = LineageEdge.objects.create(
        source=source,
        target=target,
        job=job,
        first_seen=first,
        last_seen=last,
        last_run=runs[-1] if runs else None,
        run_count=len(runs),
        completed_run_count=sum(is_write(run.state, run.is_streaming) for run in runs),
    )
    for run in runs:
        LineageEdgeRun.objects.create(
            edge=edge,
            run=run,
            first_seen=run.started_at,
            last_seen=run.started_at,
            completed=is_write(run.state, run.is_streaming),
        )
        for dataset, direction in ((source, "input"), (target, "output")):
            alias = dataset.aliases.order_by("id").first()
            RunDataset.objects.get_or_create(
                run=run,
                alias=alias,
                direction=direction,
                defaults={"first_seen": run.started_at, "last_seen": run.started_at},
            )
    for dataset, direction in ((source, "input"), (target, "output")):
        alias = dataset.aliases.order_by("id").first()
        JobDataset.objects.get_or_create(
            job=job,
            alias=alias,
            direction=direction,
            defaults={"first_seen": first, "last_seen": last},
        )
        make_job_edge(job, dataset, direction, first, last, runs)
    return edge


def make_job_edge(
    job: Job,
    dataset: Dataset,
    direction: str,
    first: datetime = T0,
    last: datetime | None = None,
    runs: list[Run] | None = None,
) -> JobLineageEdge:
    """The job edge derivation keeps for a job that read or wrote ``dataset`` (widened when
    it exists), with one JobLineageEdgeRun per run (a new run at ``first`` when none given)."""
    last = last or first
    runs = runs if runs is not None else [make_run(job, started=first)]
    edge, created = JobLineageEdge.objects.get_or_create(
        job=job,
        dataset=dataset,
        direction=direction,
        defaults={"first_seen": first, "last_seen": last},
    )
    if not created:
        edge.first_seen, edge.last_seen = min(edge.first_seen, first), max(edge.last_seen, last)
    for run in runs:
        JobLineageEdgeRun.objects.get_or_create(
            edge=edge,
            run=run,
            defaults={
                "first_seen": run.started_at,
                "last_seen": run.started_at,
                "completed": is_write(run.state, run.is_streaming),
            },
        )
    history = list(edge.runs.select_related("run"))
    edge.run_count = len(history)
    edge.completed_run_count = sum(row.completed for row in history)
    if history:
        edge.last_run = max(history, key=lambda row: (row.last_seen, row.run.run_uuid)).run
    edge.save()
    return edge


def make_column_edge(
    source: Dataset, source_field: str, target: Dataset, target_field: str, job: Job
) -> ColumnLineageEdge:
    return ColumnLineageEdge.objects.create(
        source=source,
        source_field=source_field,
        target=target,
        target_field=target_field,
        job=job,
        transformation_type="DIRECT",
        transformation_subtype="IDENTITY",
        key_hash=hashlib.sha256(f"{source_field}>{target_field}".encode()).digest(),
        first_seen=T0,
        last_seen=T0,
        run_count=1,
    )


def make_event(**fields: Any) -> Event:
    payload = fields.pop("payload", None) or {
        "eventType": fields.get("event_type", "COMPLETE"),
        "eventTime": (fields.get("event_time") or T0).isoformat(),
        "n": next(_counter),
    }
    fields.setdefault("kind", "run")
    fields.setdefault("event_type", payload.get("eventType"))
    fields.setdefault("event_time", T0)
    return Event.objects.create(
        payload=payload,
        digest=hashlib.sha256(repr((payload, next(_counter))).encode()).digest(),
        **fields,
    )


def make_metadata(resource: str, subject: str, action: str, when: datetime, **values: str):
    event = make_event(kind="metadata", event_type=None, event_time=when)
    return MetadataRecord.objects.create(
        event=event,
        resource=resource,
        subject=subject,
        action=action,
        timestamp=when,
        additional_values=values,
    )


def iso(moment: datetime) -> str:
    """A URL-safe ISO 8601 UTC time (``+00:00`` would arrive as a space)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

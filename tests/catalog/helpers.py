"""Corpus loading and a canonical dump of the catalog, for comparing derivations."""

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from django.db import connection, transaction

from catalog.models import (
    ColumnLineageEdge,
    DatasetAlias,
    DatasetChange,
    DatasetField,
    Job,
    JobLineageEdge,
    LineageEdge,
    MetadataRecord,
    Run,
)
from core.problems import Problem
from ingest.adapters import edge_record, metadata_record
from ingest.models import Event
from ingest.services import record_events
from ingest.validation import EventRecord, validate_openlineage
from tests.conftest import CORPUS
from tests.ingest.corpus import corpus_files


def each_in_a_thread(work: Callable[[Any], None], items: Iterable[Any]) -> None:
    """``work(item)`` for each item in a thread (and so a database connection) of its own,
    as concurrent workers would; fails with whatever any of them raised."""
    errors: list[BaseException] = []

    def run(item: Any) -> None:
        try:
            work(item)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@contextmanager
def run_texts_held(texts: list[str]) -> Iterator[None]:
    """What a derivation batch of the text runIds ``texts`` holds (``lock_run_texts``),
    held by another connection while the block runs and released after it."""
    from catalog.services.derivation.locks import lock_run_texts

    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                lock_run_texts(texts)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        yield
    finally:
        release.set()
        holder.join(20)


def corpus_records(root: Path = CORPUS) -> list[EventRecord]:
    """Every complete, valid event of the corpus, as ingest would store it."""
    records = []
    for item in corpus_files(root):
        if not item.parses or item.invalid_on_purpose:
            continue
        document = orjson.loads((root / item.path).read_bytes())
        for event in document if isinstance(document, list) else [document]:
            try:
                records.append(validate_openlineage(event))
            except Problem:
                continue
    return records


def store(records: list[EventRecord]) -> list[int]:
    return [stored.id for stored in record_events(records)]


def openlineage(payload: dict[str, Any]) -> EventRecord:
    return validate_openlineage(payload)


def edge(payload: dict[str, Any]) -> EventRecord:
    return edge_record(payload)


def metadata(payload: dict[str, Any]) -> EventRecord:
    return metadata_record(payload)


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def canonical_dump() -> dict[str, Any]:
    """The catalog by natural keys only (no ids, no arrival-dependent event ids)."""
    digests = dict(Event.objects.values_list("id", "digest"))

    def event_key(event_id: int | None) -> str | None:
        return bytes(digests[event_id]).hex() if event_id else None

    jobs = {job.id: (job.namespace, job.name) for job in Job.objects.all()}
    runs = {run.id: str(run.run_uuid) for run in Run.objects.all()}
    aliases = list(DatasetAlias.objects.all())
    members: dict[int, list[tuple[str, str]]] = {}
    for alias in aliases:
        members.setdefault(alias.dataset_id, []).append((alias.namespace, alias.name))
    dataset_key = {dataset_id: min(names) for dataset_id, names in members.items()}
    from catalog.models import Dataset

    dump: dict[str, Any] = {
        "jobs": sorted(
            (
                job.namespace,
                job.name,
                jobs.get(job.parent_id),
                job.is_placeholder,
                orjson.dumps(job.facets, option=orjson.OPT_SORT_KEYS).decode(),
                job.processing_type,
                _time(job.first_seen),
                _time(job.last_seen),
            )
            for job in Job.objects.all()
        ),
        "runs": sorted(
            (
                str(run.run_uuid),
                run.run_id_text,
                jobs[run.job_id],
                runs.get(run.parent_run_id),
                run.state,
                _time(run.started_at),
                _time(run.ended_at),
                _time(run.nominal_start_time),
                run.error_message,
                run.is_streaming,
                run.outputs_confirmed,
                run.shares_run_id,
                _time(run.last_event_time),
                orjson.dumps(run.facets, option=orjson.OPT_SORT_KEYS).decode(),
            )
            for run in Run.objects.all()
        ),
        "datasets": sorted(
            (
                dataset_key[dataset.id],
                (dataset.namespace, dataset.name),
                sorted(members[dataset.id]),
                orjson.dumps(dataset.facets, option=orjson.OPT_SORT_KEYS).decode(),
                dataset.lifecycle_state,
                _time(dataset.first_seen),
                _time(dataset.last_seen),
            )
            for dataset in Dataset.objects.all()
        ),
        "aliases": sorted(
            (
                alias.namespace,
                alias.name,
                alias.reason,
                event_key(alias.reason_event_id),
                alias.reason_detail,
                _time(alias.first_seen),
            )
            for alias in aliases
        ),
        "fields": sorted(
            (dataset_key[field.dataset_id], field.ordinal, field.name, field.type)
            for field in DatasetField.objects.all()
        ),
        "edges": sorted(
            (
                dataset_key[edge.source_id],
                dataset_key[edge.target_id],
                jobs[edge.job_id],
                _time(edge.first_seen),
                _time(edge.last_seen),
                runs.get(edge.last_run_id),
                edge.run_count,
                edge.completed_run_count,
                edge.lineage_type,
            )
            for edge in LineageEdge.objects.all()
        ),
        "column_edges": sorted(
            (
                dataset_key[edge.source_id],
                edge.source_field,
                dataset_key[edge.target_id],
                edge.target_field,
                jobs[edge.job_id],
                edge.transformation_type,
                edge.transformation_subtype,
                edge.transformation_description,
                edge.masking,
                edge.dataset_level,
                edge.field_transformation_type,
                edge.field_transformation_description,
                edge.run_count,
                _time(edge.first_seen),
                _time(edge.last_seen),
                runs.get(edge.last_run_id),
            )
            for edge in ColumnLineageEdge.objects.all()
        ),
        "job_edges": sorted(
            (
                jobs[edge.job_id],
                dataset_key[edge.dataset_id],
                edge.direction,
                _time(edge.first_seen),
                _time(edge.last_seen),
                runs.get(edge.last_run_id),
                edge.run_count,
                edge.completed_run_count,
                edge.via,
            )
            for edge in JobLineageEdge.objects.all()
        ),
        "metadata": sorted(
            (record.resource, record.subject, record.action, _time(record.timestamp))
            for record in MetadataRecord.objects.all()
        ),
    }
    with connection.cursor() as cursor:
        # Static lineage (ADR 0061): each job's current declaration, by natural keys.
        cursor.execute(
            "SELECT j.namespace, j.name, l.version, l.declared_at, a.namespace, a.name, "
            "s.direction, s.via FROM catalog_static_lineage l "
            "JOIN catalog_job j ON j.id = l.job_id "
            "LEFT JOIN catalog_static_dataset s ON s.job_id = l.job_id "
            "LEFT JOIN catalog_dataset_alias a ON a.id = s.alias_id"
        )
        dump["static_datasets"] = sorted(
            (row[0], row[1], row[2], _time(row[3]), row[4], row[5], row[6], row[7])
            for row in cursor.fetchall()
        )
        cursor.execute(
            "SELECT j.namespace, j.name, ta.name, c.target_field, sa.name, c.source_field, "
            "c.transformation_type, c.transformation_subtype, c.masking "
            "FROM catalog_static_column_lineage c JOIN catalog_job j ON j.id = c.job_id "
            "JOIN catalog_dataset_alias ta ON ta.id = c.target_alias_id "
            "JOIN catalog_dataset_alias sa ON sa.id = c.source_alias_id"
        )
        dump["static_columns"] = sorted(cursor.fetchall())
        # Run facts: per run, alias, direction and facet, the value of the greatest version.
        cursor.execute(
            "SELECT r.run_uuid::text, a.namespace, a.name, f.direction, f.name, f.version, "
            "f.value::text FROM catalog_run_dataset_facet f JOIN catalog_run r ON r.id = f.run_id "
            "JOIN catalog_dataset_alias a ON a.id = f.alias_id"
        )
        dump["run_dataset_facets"] = sorted(cursor.fetchall())
        cursor.execute(
            "SELECT r.run_uuid::text, a.namespace, a.name, rd.direction, rd.first_seen, "
            "rd.last_seen, rd.via, rd.confirmed FROM catalog_run_dataset rd JOIN catalog_run r "
            "ON r.id = rd.run_id JOIN catalog_dataset_alias a ON a.id = rd.alias_id"
        )
        dump["run_datasets"] = sorted(
            (row[0], row[1], row[2], row[3], _time(row[4]), _time(row[5]), row[6], row[7])
            for row in cursor.fetchall()
        )
        # The ``lineage`` facet's per-target pairs (ADR 0102), a run's and a declaration's.
        cursor.execute(
            "SELECT r.run_uuid::text, sa.namespace, sa.name, ta.namespace, ta.name, "
            "p.first_seen, p.last_seen FROM catalog_run_dataset_pair p "
            "JOIN catalog_run r ON r.id = p.run_id "
            "JOIN catalog_dataset_alias sa ON sa.id = p.source_alias_id "
            "JOIN catalog_dataset_alias ta ON ta.id = p.target_alias_id"
        )
        dump["run_pairs"] = sorted((*row[:5], _time(row[5]), _time(row[6])) for row in cursor)
        cursor.execute(
            "SELECT j.namespace, j.name, sa.namespace, sa.name, ta.namespace, ta.name "
            "FROM catalog_static_dataset_pair p JOIN catalog_job j ON j.id = p.job_id "
            "JOIN catalog_dataset_alias sa ON sa.id = p.source_alias_id "
            "JOIN catalog_dataset_alias ta ON ta.id = p.target_alias_id"
        )
        dump["static_pairs"] = sorted(cursor.fetchall())
    # Change records of every kind (ADR 0082, 0088), by what they name and their evidence.
    aliases_by_id = {alias.id: (alias.namespace, alias.name) for alias in aliases}
    dump["changes"] = sorted(
        (
            change.kind,
            aliases_by_id.get(change.alias_id),
            dataset_key.get(change.dataset_id),
            dataset_key.get(change.source_id),
            jobs.get(change.job_id),
            change.column,
            change.old_type,
            change.new_type,
            _time(change.changed_at),
            event_key(change.event_id) or "",
            change.run_id,
            change.previous_run_id,
            change.detail,
        )
        for change in DatasetChange.objects.all()
    )
    return dump

"""Purge a namespace for good (ADR 0078): its raw events, everything derived from them, the
steward input that names it, and the dead letters that mention it.

Which events go: every event that names the namespace, as its job's namespace, as the
namespace of a dataset it reads, writes or links (the derived ``catalog_event_dataset``
rows, and the payload of events not derived yet), or as the namespace of a job its run
depends on (``jobDependencies``, ADR 0090). An event of another namespace's job that
also names the purged namespace goes too: an erasure leaves nothing behind. Those other
jobs are then rebuilt from the events they keep: their derived rows are deleted and their
remaining events derived again (marked pending in the same transaction, so a purge that
stops half way leaves them to the sweep, never lost).

Each step deletes in batches of ``BATCH`` rows, a transaction each: the event table is not
locked for the whole purge, and the derivation of other namespaces goes on.
"""

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.apps import apps
from django.db import connection, transaction
from django.db.models import Q, QuerySet

from catalog.models import (
    AliasRule,
    Dataset,
    DatasetAlias,
    DisplayNamePin,
    Job,
    NamespacePurge,
    RetainedAlias,
    RetainedColumnEdge,
    RetainedControlEdge,
    RetainedEdge,
    RetainedJob,
    RetainedJobDataset,
    RetainedJobEdge,
    RetainedLink,
    Retirement,
    WebhookDelivery,
)
from catalog.names import naming
from catalog.services import display_names
from catalog.services.rederive_jobs import rederive_event_ids
from ingest import derivation_status
from ingest.models import DeadLetter, Event

BATCH = 2000

# A run's jobDependencies facet naming a job of the namespace (ADR 0090).
_DEPENDS = """(e.payload #> '{run,facets,jobDependencies,upstream}' @> %(depends)s::jsonb
    OR e.payload #> '{run,facets,jobDependencies,downstream}' @> %(depends)s::jsonb)"""
# The spellings of dataset namespaces in the payloads of events not derived yet: their
# datasets are named as sent (``postgres://Old-DB``), the catalog's as normalised
# (``postgres://old-db:5432``), and only Python's normaliser says which are the same.
_PENDING_SPELLINGS = """
SELECT DISTINCT d ->> 'namespace' FROM ingest_event e, LATERAL jsonb_array_elements(
  CASE WHEN jsonb_typeof(e.payload -> 'inputs') = 'array' THEN e.payload -> 'inputs'
    ELSE '[]'::jsonb END
  || CASE WHEN jsonb_typeof(e.payload -> 'outputs') = 'array' THEN e.payload -> 'outputs'
    ELSE '[]'::jsonb END) d
WHERE e.derivation_status <> 'derived' AND jsonb_typeof(d) = 'object'
"""
# Events that name the namespace: their job's, a dataset alias derivation linked to them,
# a job of it their run depends on (found through the control edges derivation drew, and
# only among the events of the job at the other end), or (not derived yet) an input,
# output or dependency in the payload.
_EVENTS = f"""
SELECT e.id FROM ingest_event e
WHERE md5(e.job_namespace) = md5(%(job_ns)s) AND e.job_namespace = %(job_ns)s
UNION
SELECT ed.event_id FROM catalog_event_dataset ed
JOIN catalog_dataset_alias a ON a.id = ed.alias_id WHERE a.namespace = %(ns)s
UNION
SELECT e.id FROM catalog_job n
JOIN catalog_control_edge c ON n.id IN (c.upstream_id, c.downstream_id)
JOIN catalog_job o ON o.id IN (c.upstream_id, c.downstream_id) AND o.id <> n.id
JOIN ingest_event e ON md5(e.job_name) = md5(o.name) AND e.job_name = o.name
  AND e.job_namespace = o.namespace
WHERE n.namespace = %(job_ns)s AND {_DEPENDS}
UNION
SELECT e.id FROM ingest_event e
WHERE e.derivation_status <> 'derived'
  AND (e.payload -> 'inputs' @> ANY(%(named)s::jsonb[])
    OR e.payload -> 'outputs' @> ANY(%(named)s::jsonb[]) OR {_DEPENDS})
"""
# Dead letters are messages that could not be parsed: the name, quoted, in their bytes.
_DEAD_LETTERS = """SELECT id FROM ingest_dead_letter
WHERE EXISTS (SELECT FROM unnest(%s::bytea[]) quoted WHERE position(quoted in value) > 0)"""
# Webhook deliveries whose message names it (their payload, built at enqueue, says the
# dataset's or job's namespace): the log of what was sent goes with what it was about.
_DELIVERIES = """SELECT id FROM catalog_webhook_delivery
WHERE EXISTS (SELECT FROM unnest(%s::text[]) quoted WHERE position(quoted in payload::text) > 0)"""


@dataclass(frozen=True)
class Namespace:
    """One namespace as the catalog spells it for jobs and for datasets.

    A job keeps its namespace as sent (credentials removed: ``naming.job_name``), a
    dataset's is normalised (``naming.normalise_namespace``): ``postgres://Old-DB`` names
    jobs under that spelling and datasets under ``postgres://old-db:5432``. The purge
    matched both against the normalised one, so a job namespace written any other way
    (a capital, no port) was left whole while the command said it was done.
    """

    job: str
    dataset: str

    @classmethod
    def given(cls, text: str) -> "Namespace":
        return cls(naming.job_name(text.strip(), "")[0], naming.normalise_namespace(text))

    @property
    def both(self) -> list[str]:
        return sorted({self.job, self.dataset})


@dataclass
class PurgeReport:
    """How many rows each table lost (or would lose, for a dry run)."""

    namespace: str
    counts: dict[str, int] = field(default_factory=dict)
    rebuilt_jobs: int = 0  # jobs of other namespaces rebuilt from the events they keep
    rederived_events: int = 0

    def add(self, table: str, count: int) -> None:
        self.counts[table] = self.counts.get(table, 0) + count

    def add_deleted(self, per_model: dict[str, int]) -> None:
        """What an ORM delete says it deleted (by model label), by table."""
        for label, count in per_model.items():
            self.add(apps.get_model(label)._meta.db_table, count)


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), BATCH):
        yield list(ids[start : start + BATCH])


def _ids(sql: str, values: Any) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        return sorted(row[0] for row in cursor.fetchall())


def _delete(report: PurgeReport, queryset: QuerySet[Any], dry_run: bool) -> None:
    """Delete ``queryset`` in batches (ORM deletes: what points at the rows goes with them,
    as each model says), counting every table's rows."""
    ids = sorted(queryset.values_list("pk", flat=True))
    if dry_run:
        report.add(queryset.model._meta.db_table, len(ids))
        return
    for chunk in _chunks(ids):
        with transaction.atomic():
            _, per_model = queryset.model._default_manager.filter(pk__in=chunk).delete()
        report.add_deleted(per_model)


@dataclass(frozen=True)
class _Found:
    events: list[int]
    other_jobs: list[int]  # jobs of other namespaces that lose events


def _dataset_spellings(namespace: Namespace) -> list[str]:
    """Every spelling of its dataset namespace, as sent in events not derived yet."""
    with connection.cursor() as cursor:
        cursor.execute(_PENDING_SPELLINGS)
        sent = {row[0] for row in cursor.fetchall() if isinstance(row[0], str)}
    same = {text for text in sent if naming.normalise_namespace(text) == namespace.dataset}
    return sorted(same | set(namespace.both))


def _find(namespace: Namespace) -> _Found:
    named = [f'[{{"namespace": {_json(text)}}}]' for text in _dataset_spellings(namespace)]
    depends = f'[{{"job": {{"namespace": {_json(namespace.job)}}}}}]'
    values = {"job_ns": namespace.job, "ns": namespace.dataset, "named": named}
    events = _ids(_EVENTS, {**values, "depends": depends})
    keys = set()
    for chunk in _chunks(events):
        rows = Event.objects.filter(pk__in=chunk, job_name__isnull=False).exclude(
            job_namespace=namespace.job
        )
        for job_namespace, job_name in rows.values_list("job_namespace", "job_name").distinct():
            keys.add(naming.job_key(job_namespace or "", job_name or ""))
    other_jobs = sorted(Job.objects.filter(key_hash__in=list(keys)).values_list("pk", flat=True))
    return _Found(events, other_jobs)


def _json(text: str) -> str:
    """``text`` as a JSON string (exactly as a payload spells it)."""
    return orjson.dumps(text).decode()


# Its events not derived yet are marked so before anything is deleted: a worker deriving
# one after the namespace's rows went (ingest and derivation go on) brought them back with
# no event left to name them. One a worker holds is waited for, then purged with the rest.
_OUT_OF_REACH = f"""
UPDATE ingest_event SET derivation_status = '{derivation_status.FAILED}',
    derivation_error = 'being purged (manage.py purge_namespace)'
WHERE id = ANY(%s) AND derivation_status = '{derivation_status.PENDING}'
"""


def _out_of_derivations_reach(events: list[int]) -> None:
    for chunk in _chunks(events):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_OUT_OF_REACH, [chunk])


def _rebuild_other_jobs(report: PurgeReport, found: _Found, dry_run: bool) -> list[int]:
    """Delete the other namespaces' jobs that lose events, their remaining events set
    pending in the same transaction; returns those events (derived again at the end)."""
    purged = set(found.events)
    keep: list[int] = []
    for job in Job.objects.filter(pk__in=found.other_jobs).only("namespace", "name"):
        ids = Event.objects.filter(job_namespace=job.namespace, job_name=job.name)
        keep += [
            event_id for event_id in ids.values_list("pk", flat=True) if event_id not in purged
        ]
    report.rebuilt_jobs, report.rederived_events = len(found.other_jobs), len(keep)
    if dry_run:
        return keep
    with transaction.atomic():
        with connection.cursor() as cursor:
            for chunk in _chunks(keep):
                derivation_status.reset_ids(cursor, chunk)
        _, per_model = Job.objects.filter(pk__in=found.other_jobs).delete()
    report.add_deleted(per_model)
    return keep


def _retained_rows(namespace: Namespace) -> list[tuple[QuerySet[Any], str]]:
    """What retention kept of the namespace's removed events (ADR 0079): summaries keyed by
    job and alias keys, which a rederive would otherwise derive back. The keys are read
    from the live rows and the retained ones alike, so these go before either."""

    def keys(*querysets: QuerySet[Any]) -> list[bytes]:
        return [bytes(key) for qs in querysets for key in qs.values_list("key_hash", flat=True)]

    job_keys = keys(
        Job.objects.filter(namespace=namespace.job),
        RetainedJob.objects.filter(namespace=namespace.job),
    )
    alias_keys = keys(
        DatasetAlias.objects.filter(namespace=namespace.dataset),
        RetainedAlias.objects.filter(namespace=namespace.dataset),
    )
    touching = Q(job_key__in=job_keys)
    return [
        (
            RetainedEdge.objects.filter(
                touching | Q(source_key__in=alias_keys) | Q(target_key__in=alias_keys)
            ),
            "retained edges",
        ),
        (
            RetainedJobEdge.objects.filter(touching | Q(dataset_key__in=alias_keys)),
            "retained job edges",
        ),
        (
            RetainedJobDataset.objects.filter(touching | Q(alias_key__in=alias_keys)),
            "retained job datasets",
        ),
        (
            RetainedColumnEdge.objects.filter(
                touching | Q(source_key__in=alias_keys) | Q(target_key__in=alias_keys)
            ),
            "retained column edges",
        ),
        (
            # Either end: a control edge names two jobs, both of them the namespace's data.
            RetainedControlEdge.objects.filter(
                Q(upstream_key__in=job_keys) | Q(downstream_key__in=job_keys)
            ),
            "retained control edges",
        ),
        (
            RetainedLink.objects.filter(Q(alias_a__in=alias_keys) | Q(alias_b__in=alias_keys)),
            "retained links",
        ),
        (RetainedJob.objects.filter(namespace=namespace.job), "retained jobs"),
        (RetainedAlias.objects.filter(namespace=namespace.dataset), "retained aliases"),
    ]


def _namespace_rows(namespace: Namespace) -> list[tuple[QuerySet[Any], str]]:
    """What is derived or stewarded under the namespace, in deletion order."""
    quoted = [_json(text) for text in namespace.both]
    return [
        *_retained_rows(namespace),
        (Retirement.objects.filter(namespace__in=namespace.both), "retirements"),
        (Job.objects.filter(namespace=namespace.job), "jobs"),
        (DatasetAlias.objects.filter(namespace=namespace.dataset), "aliases"),
        # Datasets whose every name was in it (those with other names stay, renamed below).
        (Dataset.objects.filter(namespace=namespace.dataset, aliases__isnull=True), "datasets"),
        (DisplayNamePin.objects.filter(namespace=namespace.dataset), "pins"),
        (
            WebhookDelivery.objects.filter(
                pk__in=[str(uuid) for uuid in _ids(_DELIVERIES, [quoted])]
            ),
            "webhook deliveries",
        ),
        (
            AliasRule.objects.filter(
                Q(namespace__in=namespace.both) | Q(target_namespace__in=namespace.both)
            ),
            "alias rules",
        ),
    ]


def purge_namespace(
    namespace: str,
    by: str,
    dry_run: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PurgeReport:
    """Remove ``namespace`` entirely; with ``dry_run``, only count. Leaves a
    ``NamespacePurge`` record (who, when, rows per table; the name itself only hashed)."""
    names = Namespace.given(namespace)
    say = progress or (lambda message: None)
    report = PurgeReport(names.dataset)
    found = _find(names)
    say(f"{len(found.events)} event(s) name it; {len(found.other_jobs)} other job(s) rebuilt")
    if not dry_run:
        _out_of_derivations_reach(found.events)
    rederive = _rebuild_other_jobs(report, found, dry_run)
    for queryset, what in _namespace_rows(names):
        say(f"deleting {what}")
        _delete(report, queryset, dry_run)
    if not dry_run:  # datasets that kept other names: shown under one of them now
        for dataset in Dataset.objects.filter(namespace=names.dataset):
            display_names.refresh_display_name(dataset)
    # Dead letters first: one replayed into a purged event protects it.
    letters = _ids(_DEAD_LETTERS, [[_json(text).encode() for text in _dataset_spellings(names)]])
    _delete(report, DeadLetter.objects.filter(pk__in=letters), dry_run)
    say("deleting events")
    _delete(report, Event.objects.filter(pk__in=found.events), dry_run)
    if not dry_run:
        if rederive:
            say(f"deriving {len(rederive)} event(s) of the rebuilt jobs")
            rederive_event_ids(rederive)
        NamespacePurge.objects.create(
            namespace_sha256=hashlib.sha256(names.dataset.encode()).hexdigest(),
            purged_by=by,
            rows={table: count for table, count in sorted(report.counts.items()) if count},
        )
    return report

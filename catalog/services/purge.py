"""Purge a namespace for good (ADR 0078): its raw events, everything derived from them, the
steward input that names it, and the dead letters that mention it.

Which events go: every event that names the namespace, as its job's namespace, as the
namespace of a dataset it reads, writes or links (the derived ``catalog_event_dataset``
rows, and the payload of events not derived yet), or as the namespace of a job its run
depends on (``jobDependencies``, ADR 0090). An event of another namespace's job that
also names the purged namespace goes too: an erasure leaves nothing behind. Those other
jobs are then rebuilt from the events they keep: their derived rows are deleted and their
remaining events derived again (marked pending in the same transaction, so a purge that
stops half way leaves them to the sweep, never lost). So are the datasets those events named
that keep a name outside the namespace (``purge_datasets``, ADR 0167): emptied of what
events gave them, their kept events derived again, the names only removed events gave gone.

Each step deletes in batches of ``BATCH`` rows, a transaction each: the event table is not
locked for the whole purge, and the derivation of other namespaces goes on. The ids each
step works through are held by PostgreSQL, not Python (``purge_lists``, ADR 0158): the
command's memory is a batch's, whatever the size of the namespace.

So a purge is not all-or-nothing, and a run that stops at any step is finished by running
it again (ADR 0165): before it deletes anything, it marks failed, with a mark of the
namespace, the events it will remove that a second run could not otherwise find once the
rows it found them through (other jobs, aliases, control edges) are gone.
"""

import hashlib
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial, reduce
from typing import Any

import orjson
from django.apps import apps
from django.db import OperationalError, connection, transaction
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from catalog.models import (
    AliasRule,
    Dataset,
    DatasetAlias,
    DisplayNamePin,
    Job,
    JobLineageEdge,
    LineageEdge,
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
    Run,
    WebhookDelivery,
)
from catalog.names import naming
from catalog.services import display_names, purge_datasets
from catalog.services.derivation import run_conflicts
from catalog.services.derivation.batch import retrying
from catalog.services.purge_lists import IdList
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
    ELSE '[]'::jsonb END
  || jsonb_build_array(e.payload -> 'dataset')) d
WHERE e.derivation_status <> 'derived' AND jsonb_typeof(d) = 'object'
"""
# Events that name the namespace: their job's, a dataset alias derivation linked to them,
# a job of it their run depends on (found through the control edges derivation drew, and
# only among the events of the job at the other end), (not derived yet) an input, output,
# a DatasetEvent's dataset or a dependency in the payload, or the mark an earlier run of
# this purge left on them (ADR 0165: the rows the second and third ways read may be gone).
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
    OR e.payload -> 'outputs' @> ANY(%(named)s::jsonb[])
    OR jsonb_build_array(e.payload -> 'dataset') @> ANY(%(named)s::jsonb[]) OR {_DEPENDS})
UNION
SELECT e.id FROM ingest_event e
WHERE e.derivation_status = '{derivation_status.FAILED}' AND e.derivation_error = %(mark)s
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
    rebuilt_datasets: int = 0  # datasets it named that keep other names, rebuilt too
    rederived_events: int = 0
    # Of those, left pending for the worker's sweep: their derivation here failed (ADR 0209).
    left_pending: int = 0

    def add(self, table: str, count: int) -> None:
        self.counts[table] = self.counts.get(table, 0) + count

    def add_deleted(self, per_model: dict[str, int]) -> None:
        """What an ORM delete says it deleted (by model label), by table."""
        for label, count in per_model.items():
            self.add(apps.get_model(label)._meta.db_table, count)


def _delete(report: PurgeReport, queryset: QuerySet[Any], dry_run: bool, size: int) -> None:
    """Delete the rows ``queryset`` has now, ``size`` a transaction, counting every table's
    rows."""
    if dry_run:
        report.add(queryset.model._meta.db_table, queryset.count())
        return
    step = IdList.of("step", queryset)
    for chunk in step.batches(size):
        if queryset.model is Job:
            _delete_jobs_runs(report, chunk, size)
        _in_transaction(report, partial(_delete_ids, model=queryset.model, ids=chunk, size=size))
    step.drop()


def _in_transaction(report: PurgeReport, work: Callable[[PurgeReport], None]) -> None:
    """``work`` in a transaction of its own, done again after a deadlock as a derivation
    batch is (``retrying``), its rows counted in ``report`` once it commits.

    A run deletion holds its runIds' locks (taken holding none while it waits,
    ``run_conflicts.lock_run_ids``) and then waits for rows a derivation batch can hold
    while that batch waits for one of those runIds (another namespace's child run, whose
    parent link the deletion clears): PostgreSQL ends one of the two. Ended, the purge
    stopped with a traceback half way (ADR 0209)."""

    def attempt() -> PurgeReport:
        counted = PurgeReport(report.namespace)
        with transaction.atomic():
            work(counted)
        return counted

    for table, count in retrying(attempt).counts.items():
        report.add(table, count)


def _delete_ids(report: PurgeReport, model: type[Any], ids: list[Any], size: int) -> None:
    """ORM deletes (what points at the rows goes with them, as each model says) in the
    caller's transaction, what Django would read into memory first deleted before,
    ``size`` rows at a time."""
    for queryset in _read_by_delete(model, ids):
        rows = IdList.of("dependants", queryset)
        for chunk in rows.batches(size):
            if queryset.model is Run:  # those derived since _delete_jobs_runs: rarely any
                _delete_runs(report, chunk)
            else:
                _delete_now(report, queryset.model, chunk)
        rows.drop()
    _delete_now(report, model, ids)


def _delete_jobs_runs(report: PurgeReport, jobs: list[Any], size: int) -> None:
    """The runs of ``jobs``, ``size`` a transaction, before the jobs' own transaction: each
    holds the locks of at most ``size`` runs' runIds (a job's runs grow with time, and a
    transaction holding millions would fill PostgreSQL's lock table)."""
    runs = IdList.of("runs", Run.objects.filter(job_id__in=jobs))
    for chunk in runs.batches(size):
        _in_transaction(report, partial(_delete_runs, ids=chunk))
    runs.drop()


def _delete_runs(report: PurgeReport, ids: list[Any]) -> None:
    """Runs (what points at them goes with them) in the caller's transaction, their runIds
    locked first, holding none of them while one is waited for (``lock_run_ids``, ADR
    0209); a run another job's run of its runId kept alone is unflagged ``shares_run_id``
    after (ADR 0202). Before the deletion writes anything: a batch holding one of the
    runIds never waits for this transaction."""
    run_ids = run_conflicts.run_ids_of(ids)
    run_conflicts.lock_run_ids(run_ids)
    _delete_now(report, Run, ids)
    run_conflicts.unflag_left_alone(run_ids)


def _delete_now(report: PurgeReport, model: type[Any], ids: list[Any]) -> None:
    # Django reads the rows it deletes first; their keys only (no signal handler needs more),
    # or a batch of events would be read with their payloads, up to 8 MiB each.
    report.add_deleted(model._default_manager.filter(pk__in=ids).only("pk").delete()[1])


def _read_by_delete(model: type[Any], ids: list[Any]) -> list[QuerySet[Any]]:
    """The rows Django's delete of ``ids`` would read whole (they cascade, and rows point
    at them in turn; the rest it deletes by a statement): a job's runs grow with time, a
    job's and a dataset's edges with what it touched, so a batch of jobs could read
    millions."""
    if model is Job:
        return [
            Run.objects.filter(job_id__in=ids),
            LineageEdge.objects.filter(job_id__in=ids),
            JobLineageEdge.objects.filter(job_id__in=ids),
        ]
    if model is Dataset:
        return [
            LineageEdge.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)),
            JobLineageEdge.objects.filter(dataset_id__in=ids),
        ]
    return []


@dataclass(frozen=True)
class _Found:
    events: IdList
    other_jobs: IdList  # jobs of other namespaces that lose events


def _dataset_spellings(namespace: Namespace) -> list[str]:
    """Every spelling of its dataset namespace, as sent in events not derived yet."""
    with connection.cursor() as cursor:
        cursor.execute(_PENDING_SPELLINGS)
        sent = {row[0] for row in cursor.fetchall() if isinstance(row[0], str)}
    same = {text for text in sent if naming.normalise_namespace(text) == namespace.dataset}
    return sorted(same | set(namespace.both))


def _find(namespace: Namespace, size: int) -> _Found:
    named = [f'[{{"namespace": {_json(text)}}}]' for text in _dataset_spellings(namespace)]
    depends = f'[{{"job": {{"namespace": {_json(namespace.job)}}}}}]'
    values = {"job_ns": namespace.job, "ns": namespace.dataset, "named": named}
    events = IdList("events")
    params = {**values, "depends": depends, "mark": _mark(namespace)}
    events.fill(_EVENTS, params, analyse=True)  # _KEPT joins it
    other_jobs = IdList("other_jobs")
    for chunk in events.batches(size):
        rows = Event.objects.filter(pk__in=chunk, job_name__isnull=False).exclude(
            job_namespace=namespace.job
        )
        keys = {
            naming.job_key(job_namespace or "", job_name or "")
            for job_namespace, job_name in rows.values_list("job_namespace", "job_name").distinct()
        }
        if keys:
            other_jobs.fill_from(Job.objects.filter(key_hash__in=list(keys)))
    return _Found(events, other_jobs)


def _json(text: str) -> str:
    """``text`` as a JSON string (exactly as a payload spells it)."""
    return orjson.dumps(text).decode()


# Before anything is deleted, its events not derived yet are marked failed: a worker
# deriving one after the namespace's rows went (ingest and derivation go on) brought them
# back with no event left to name them. One a worker holds is waited for, then purged with
# the rest. The derived events of other jobs are marked too (ADR 0165): the aliases and
# jobs they were found through go before them, so a run that stops in between leaves the
# mark for the next run to find them by (params: [ids, mark, its job namespace]). Its own
# jobs' derived events keep their status: their job namespace finds them again.
_OUT_OF_REACH = f"""
UPDATE ingest_event SET derivation_status = '{derivation_status.FAILED}', derivation_error = %s
WHERE id = ANY(%s) AND (derivation_status = '{derivation_status.PENDING}'
  OR derivation_status = '{derivation_status.DERIVED}' AND job_namespace IS DISTINCT FROM %s)
"""


def _mark(namespace: Namespace) -> str:
    """The error an event being purged is marked failed with: the namespace as the audit
    record keeps it (its sha256), so a run finds its own marks and no other purge's."""
    return f"being purged (manage.py purge_namespace {_sha256(namespace)})"


def _sha256(namespace: Namespace) -> str:
    return hashlib.sha256(namespace.dataset.encode()).hexdigest()


def _out_of_derivations_reach(namespace: Namespace, events: IdList, size: int) -> None:
    for chunk in events.batches(size):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_OUT_OF_REACH, [_mark(namespace), chunk, namespace.job])


# The events some jobs keep (params: [job ids]): theirs, less those the purge removes.
_KEPT = """SELECT e.id FROM catalog_job j
JOIN ingest_event e ON md5(e.job_name) = md5(j.name) AND e.job_name = j.name
  AND e.job_namespace = j.namespace
WHERE j.id = ANY(%s) AND NOT EXISTS (SELECT FROM {purged} p WHERE p.id = e.id)"""


def _rebuild_other_jobs(report: PurgeReport, found: _Found, dry_run: bool, size: int) -> IdList:
    """Delete the other namespaces' jobs that lose events, ``size`` jobs a transaction
    (their runs first, ``size`` a transaction: ``_delete_jobs_runs``), their remaining
    events set pending in the jobs' one; returns those events (derived again at the end)."""
    keep = IdList("rederive")
    kept = _KEPT.format(purged=found.events.table)
    for jobs in found.other_jobs.batches(size):
        if dry_run:
            keep.fill(kept, [jobs])
            continue
        _delete_jobs_runs(report, jobs, size)

        def rebuild(counted: PurgeReport, jobs: list[Any] = jobs) -> None:
            with connection.cursor() as cursor:
                derivation_status.reset_selected(
                    cursor, keep.insert(kept) + " RETURNING id", [jobs]
                )
            _delete_ids(counted, Job, jobs, size)

        _in_transaction(report, rebuild)
    report.rebuilt_jobs, report.rederived_events = found.other_jobs.count(), keep.count()
    return keep


def _rebuild_datasets(
    report: PurgeReport, names: Namespace, found: _Found, keep: IdList, dry_run: bool, size: int
) -> IdList:
    """The datasets its events named that keep a name elsewhere, emptied of what events
    gave them, their kept events set pending and added to ``keep`` (ADR 0167)."""
    touched = purge_datasets.find(found.events, names.dataset)
    if dry_run:
        names_only_it_gave = purge_datasets.count(found.events, touched, names.dataset, keep, size)
        report.add(DatasetAlias._meta.db_table, names_only_it_gave)
    else:

        def delete(model: type[Any], ids: list[Any]) -> None:
            _delete_ids(report, model, ids, size)

        purge_datasets.rebuild(found.events, touched, names.dataset, keep, delete, size)
    report.rebuilt_datasets, report.rederived_events = touched.count(), keep.count()
    return touched


def _derive_or_leave(report: PurgeReport, events: list[Any], say: Callable[[str], None]) -> None:
    """Derive the kept ``events`` (pending since their jobs' transaction); a derivation that
    fails for now (``OperationalError``: 5 deadlocks in a row with the batches of a stream
    deriving the same runIds, a lock timeout) leaves them pending, which the worker's sweep
    derives, and says so: it ended the purge in a traceback, its audit record unwritten."""
    try:
        rederive_event_ids(events)
    except OperationalError as error:
        pending = Event.objects.filter(
            pk__in=events, derivation_status=derivation_status.PENDING
        ).count()
        report.left_pending += pending
        say(f"{pending} event(s) left pending for the worker's sweep: {error}".strip())


def _retained_rows(namespace: Namespace) -> list[tuple[QuerySet[Any], str]]:
    """What retention kept of the namespace's removed events (ADR 0079): summaries keyed by
    job and alias keys, which a rederive would otherwise derive back. The keys are read
    from the live rows and the retained ones alike, so these go before either."""

    def keys(*querysets: QuerySet[Any]) -> Callable[..., Q]:
        """Rows whose ``fields`` hold a key of ``querysets``: subqueries, so the keys are
        read by each step's statement, never into Python."""
        sources = [qs.values("key_hash") for qs in querysets]
        return lambda *fields: reduce(
            operator.or_, (Q(**{f"{field}__in": source}) for field in fields for source in sources)
        )

    jobs = keys(
        Job.objects.filter(namespace=namespace.job),
        RetainedJob.objects.filter(namespace=namespace.job),
    )
    aliases = keys(
        DatasetAlias.objects.filter(namespace=namespace.dataset),
        RetainedAlias.objects.filter(namespace=namespace.dataset),
    )
    return [
        (
            RetainedEdge.objects.filter(jobs("job_key") | aliases("source_key", "target_key")),
            "retained edges",
        ),
        (
            RetainedJobEdge.objects.filter(jobs("job_key") | aliases("dataset_key")),
            "retained job edges",
        ),
        (
            RetainedJobDataset.objects.filter(jobs("job_key") | aliases("alias_key")),
            "retained job datasets",
        ),
        (
            RetainedColumnEdge.objects.filter(
                jobs("job_key") | aliases("source_key", "target_key")
            ),
            "retained column edges",
        ),
        (
            # Either end: a control edge names two jobs, both of them the namespace's data.
            RetainedControlEdge.objects.filter(jobs("upstream_key", "downstream_key")),
            "retained control edges",
        ),
        (RetainedLink.objects.filter(aliases("alias_a", "alias_b")), "retained links"),
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
            WebhookDelivery.objects.filter(pk__in=RawSQL(_DELIVERIES, [quoted])),
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
    ``NamespacePurge`` record (who, when, rows per table; the name itself only hashed).
    Python holds at most ``BATCH`` ids of any table at a time. ``progress`` is told each
    step before it starts, between two transactions: a run stopped there (or anywhere) and
    run again ends as one that never stopped (ADR 0165; the tests stop it through it)."""
    batch_size = BATCH  # read now: the tests make it small
    names = Namespace.given(namespace)
    say = progress or (lambda message: None)
    report = PurgeReport(names.dataset)
    found = _find(names, batch_size)
    say(f"{found.events.count()} event(s) name it; {found.other_jobs.count()} other job(s) rebuilt")
    if not dry_run:
        _out_of_derivations_reach(names, found.events, batch_size)
    say("rebuilding other jobs")
    rederive = _rebuild_other_jobs(report, found, dry_run, batch_size)
    say("rebuilding datasets that keep other names")
    touched = _rebuild_datasets(report, names, found, rederive, dry_run, batch_size)
    for queryset, what in _namespace_rows(names):
        say(f"deleting {what}")
        _delete(report, queryset, dry_run, batch_size)
    say("renaming datasets that keep other names")
    if not dry_run:  # datasets that kept other names: shown under one of them now
        renamed = IdList.of("renamed", Dataset.objects.filter(namespace=names.dataset))
        for chunk in renamed.batches(batch_size):
            for dataset in Dataset.objects.filter(pk__in=chunk):
                display_names.refresh_display_name(dataset)
        renamed.drop()
    # Dead letters first: one replayed into a purged event protects it.
    say("deleting dead letters")
    quoted = [_json(text).encode() for text in _dataset_spellings(names)]
    letters = DeadLetter.objects.filter(pk__in=RawSQL(_DEAD_LETTERS, [quoted]))
    _delete(report, letters, dry_run, batch_size)
    say("deleting events")
    _delete(
        report, Event.objects.filter(pk__in=RawSQL(found.events.select, ())), dry_run, batch_size
    )
    if not dry_run:
        if report.rederived_events:
            say(f"deriving {report.rederived_events} event(s) of the rebuilt jobs and datasets")
            for chunk in rederive.batches(batch_size):
                _derive_or_leave(report, chunk, say)
        NamespacePurge.objects.create(
            namespace_sha256=_sha256(names),
            purged_by=by,
            rows={table: count for table, count in sorted(report.counts.items()) if count},
        )
    for ids in (found.events, found.other_jobs, rederive, touched):
        ids.drop()
    return report

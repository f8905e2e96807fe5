"""Jobs and runs: upsert by natural key, lock in primary-key order, merge facts by version."""

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from catalog.facets import documentation, error_message, job_type, nominal_time
from catalog.models import TERMINAL_STATES, Job, RememberedKind, Run, RunState
from catalog.names.naming import key_hash, producer_text
from catalog.services import labels
from catalog.services.derivation.locks import (
    bulk_update,
    ids_by_key_hash,
    ids_inserting_missing,
    lock_run_texts,
    lock_run_uuids,
    locked,
    try_lock_run_texts,
    try_lock_run_uuids,
    write_facets_if_changed,
)
from catalog.services.derivation.records import (
    Facts,
    JobKey,
    RunFact,
    RunKey,
    Version,
    earliest,
    iso,
    latest,
)
from catalog.services.derivation.remembered import remembered, run_key
from catalog.services.derivation.run_conflicts import mark_shared_run_ids, mark_shared_run_texts
from core.timestamps import parse_timestamp

K = TypeVar("K", JobKey, RunKey)

JOB_FIELDS = [
    "is_placeholder",
    "facets",
    "facet_versions",
    "processing_type",
    "job_type",
    "integration",
    "description",
    "tags",
    "owners",
    "first_seen",
    "last_seen",
    "parent",
    "updated_at",
]
RUN_FIELDS = [
    "run_id_text",
    "job",
    "parent_run",
    "is_placeholder",
    "state",
    "state_time",
    "state_version",
    "started_at",
    "ended_at",
    "duration",
    "nominal_start_time",
    "nominal_end_time",
    "error_message",
    "is_streaming",
    "emits_snapshots",
    "tags",
    "outputs_confirmed",
    "last_event_time",
    "first_event_time",
    "first_start_time",
    "facets",
    "facet_versions",
    "job_version",
    "updated_at",
]


def merge_facets(
    facets: dict[str, Any], versions: dict[str, Any], new: dict[str, tuple[Version, Any]]
) -> set[str]:
    """Keep, per facet key, the value of the greatest version; returns the keys changed."""
    changed = set()
    for key, (version, value) in new.items():
        current = versions.get(key)
        if current is None or list(version) > current:
            versions[key] = list(version)
            if facets.get(key) != value:
                changed.add(key)
            facets[key] = value
    return changed


def ensure_jobs(facts: Facts) -> dict[JobKey, int]:
    """Insert the jobs the batch names that do not exist yet; returns key → id.

    No row lock: a job's id never changes, so reading it needs none, and the aggregate
    update (``merge_jobs``) comes in the batch's contended part (see locks.py).
    """
    return ids_by_key_hash(
        Job,
        {key_hash(*key): key for key in facts.jobs},
        lambda digest, key: Job(namespace=key[0], name=key[1], key_hash=digest),
        lambda digests: remembered(RememberedKind.JOB, digests),
    )


def _newer_parent(versions: dict[str, Any], parent: tuple[Version, K] | None) -> K | None:
    """The parent's key when the batch's parent fact is newer than the one held, else None.

    The parent is versioned like a facet (under "_parent"), so events arriving out of order
    leave the latest event's parent, as for every other facet.
    """
    if parent is None:
        return None
    version, parent_key = parent
    current = versions.get("_parent")
    if current is not None and list(version) <= current:
        return None
    versions["_parent"] = list(version)
    return parent_key


def merge_jobs(facts: Facts, ids: dict[JobKey, int]) -> None:
    """Fold the batch's job facts into the jobs' aggregates (jobs locked in id order)."""
    if not ids:
        return
    keys = {job_id: key for key, job_id in ids.items()}
    jobs = list(locked(Job.objects.filter(id__in=list(keys))))
    steward_labels = labels.job_labels(jobs)  # after the lock (see job_labels)
    facets_changed = set()
    for job in jobs:
        fact = facts.jobs[keys[job.id]]
        if fact.own:
            job.is_placeholder = False
        if merge_facets(job.facets, job.facet_versions, fact.facets):
            facets_changed.add(job.id)
        if fact.times:
            job.first_seen = earliest(job.first_seen, min(fact.times))
            job.last_seen = latest(job.last_seen, max(fact.times))
        parent_key = _newer_parent(job.facet_versions, fact.parent)
        if parent_key is not None:
            job.parent_id = ids[parent_key]
        processing_type, kind, integration = job_type.projection(job.facets)
        # Producer text the catalog shows and searches: stored redacted (ADR 0056).
        job.processing_type = producer_text(processing_type, 16)
        job.job_type = producer_text(kind, 64)
        job.integration = producer_text(integration, 64)
        job.description = producer_text(documentation.description(job.facets) or "")
        # Written with the row's other projections (not a facets change).
        labels.project(job, steward_labels.get(job.id, []))
    write_facets_if_changed(jobs, facets_changed, JOB_FIELDS)


def derive_jobs(facts: Facts) -> dict[JobKey, int]:
    """Upsert every job named in the batch (placeholders too); returns key → id."""
    ids = ensure_jobs(facts)
    merge_jobs(facts, ids)
    return ids


def split_runs(facts: Facts, named: set[RunKey]) -> tuple[list[RunKey], list[RunKey]]:
    """The batch's runs other than ``named`` (``referenced_runs``) as (ours now, held by
    another batch), by their runId's lock.

    A run is derived under the transaction lock of its runId (locks.try_lock_run_uuids);
    the runs whose lock is free are derived in the batch's free part. A run whose lock
    another batch holds (a run whose events two batches share), and a run whose parent's
    is held, wait for it in the contended part, before any other contended lock. A named
    run needs no lock (``ensure_referenced_runs``), so neither do its children.
    """
    runs = [(key, fact) for key, fact in facts.runs.items() if key not in named]
    # A text runId's lock first (ADR 0201): a runId's lock is tried only once its text's is
    # held, so no batch holds a text's runId while it waits for the text.
    texts = set(try_lock_run_texts(sorted({f.text_run_id for _, f in runs if f.text_run_id})))
    uuids = sorted({f.run_uuid for _, f in runs if f.text_run_id is None or f.text_run_id in texts})
    free = set(try_lock_run_uuids(uuids))
    ours: list[RunKey] = []
    held: list[RunKey] = []
    for key, fact in runs:
        parent_free = fact.parent is None or fact.parent[1] in named or fact.parent[1][0] in free
        (ours if fact.run_uuid in free and parent_free else held).append(key)
    return ours, held


def lock_held_runs(facts: Facts, held: list[RunKey]) -> None:
    """Wait for the locks of the runs ``split_runs`` found held: their texts' (sorted),
    then their runIds' (sorted), in the order every batch takes them."""
    lock_run_texts(sorted({text for key in held if (text := facts.runs[key].text_run_id)}))
    lock_run_uuids(sorted({facts.runs[key].run_uuid for key in held}))


def referenced_runs(facts: Facts) -> list[RunKey]:
    """The runs the batch only names (a parent run none of whose events is in the batch):
    nothing of theirs to fold, only their ids to read."""
    return [key for key, fact in facts.runs.items() if _is_reference(fact)]


def _is_reference(fact: RunFact) -> bool:
    return not (
        fact.own
        or fact.state is not None
        or fact.first_event is not None
        or fact.last_event is not None
        or fact.first_start is not None
        or fact.streaming
        or fact.facets
        or fact.parent is not None
    )


def ensure_referenced_runs(
    facts: Facts, job_ids: dict[JobKey, int], keys: list[RunKey]
) -> dict[RunKey, int]:
    """The ids of the runs ``keys`` (``referenced_runs``), a placeholder inserted for each
    that does not exist yet, as ``derive_runs`` would leave it (its job version is a parent
    facet's, ``[0, "", ""]``).

    No lock: the DAG run of a hundred tasks is named by every batch of them, and locking it
    made those batches take turns (measured: the largest wait of two workers on the
    shared-datasets stream). Only a parent two batches insert at once makes the second
    wait, once; the batch calls this before it takes any runId lock, so that wait cannot
    close a cycle.
    """
    wanted = {(facts.runs[key].run_uuid, job_ids[key[1]]): key for key in keys}

    def read(pairs: list[tuple[uuid.UUID, int]]) -> dict[tuple[uuid.UUID, int], int]:
        rows = Run.objects.filter(run_uuid__in=sorted({run_uuid for run_uuid, _ in pairs}))
        found = rows.values_list("run_uuid", "job_id", "id")
        return {
            (run_uuid, job): run_id for run_uuid, job, run_id in found if (run_uuid, job) in wanted
        }

    def placeholder(pair: tuple[uuid.UUID, int], key: RunKey) -> Run:
        fact = facts.runs[key]
        (own, version), _ = fact.job
        return Run(
            run_uuid=pair[0],
            run_id_text=fact.run_id_text,
            job_id=pair[1],
            state=RunState.UNKNOWN,
            job_version=[own, *version],
        )

    return ids_inserting_missing(Run, wanted, read, placeholder, _remembered_run_ids(job_ids))


def _remembered_run_ids(
    job_ids: dict[JobKey, int],
) -> Callable[[list[tuple[uuid.UUID, int]]], dict[tuple[uuid.UUID, int], int]]:
    """Remembered ids (ADR 0077) of runs given as (runId, job id) pairs."""
    job_hashes = {job_id: key_hash(*job) for job, job_id in job_ids.items()}

    def read(pairs: list[tuple[uuid.UUID, int]]) -> dict[tuple[uuid.UUID, int], int]:
        keys = {run_key(run_uuid, job_hashes[job]): (run_uuid, job) for run_uuid, job in pairs}
        found = remembered(RememberedKind.RUN, list(keys))
        return {keys[key]: run_id for key, run_id in found.items()}

    return read


def derive_runs(
    facts: Facts,
    job_ids: dict[JobKey, int],
    keys: list[RunKey] | None = None,
    known: dict[RunKey, int] | None = None,
) -> tuple[dict[RunKey, int], dict[int, int], dict[int, datetime], set[int]]:
    """Upsert and merge the runs ``keys`` (default: all of the batch's); returns (run key →
    id, run id → previous job of runs moved, run id → the start it had before the batch
    for runs whose start moved, the ids of those that emit snapshots, ADR 0091: their
    column edges are recomputed, not folded). ``known`` holds the ids of runs already
    derived in this batch (a parent derived in the free part).

    A run's job is part of its identity (ADR 0028), so no run moves to another job any
    more; the second value stays for the callers' sake and is always empty. Its start
    does move (a late START, an earlier event): the run changes (ADR 0088) recompute the
    run that followed it where it was, which only the old start finds.
    """
    wanted = {key: facts.runs[key] for key in (facts.runs if keys is None else keys)}
    if not wanted:
        return {}, {}, {}, set()
    ordered = sorted(wanted.values(), key=lambda fact: (fact.run_uuid, fact.job[1]))
    run_keys = [run_key(fact.run_uuid, key_hash(*fact.job[1])) for fact in ordered]
    kept = remembered(RememberedKind.RUN, run_keys)  # empty but during a full rederive
    # A remembered id is this run's only, so a conflict on it is this run, as on its key.
    Run.objects.bulk_create(
        [
            Run(
                id=kept.get(key),
                run_uuid=fact.run_uuid,
                run_id_text=fact.run_id_text,
                job_id=job_ids[fact.job[1]],
                state=RunState.UNKNOWN,
            )
            for fact, key in zip(ordered, run_keys, strict=True)
        ],
        ignore_conflicts=True,
    )
    by_ids = {(fact.run_uuid, job_ids[fact.job[1]]): key for key, fact in wanted.items()}
    uuids = sorted({fact.run_uuid for fact in wanted.values()})
    runs = [
        run
        for run in locked(Run.objects.filter(run_uuid__in=uuids))
        if (run.run_uuid, run.job_id) in by_ids
    ]
    ids = {by_ids[(run.run_uuid, run.job_id)]: run.id for run in runs}
    parents = {**(known or {}), **ids}
    left: dict[int, datetime] = {}
    for run in runs:
        before = run.started_at
        fact = facts.runs[by_ids[(run.run_uuid, run.job_id)]]
        (own, version), _ = fact.job
        job_version = [own, *version]
        if not run.job_version or job_version > run.job_version:
            run.job_version = job_version
        if fact.own:
            run.is_placeholder = False
            run.run_id_text = fact.run_id_text
        if fact.state is not None and (
            not run.state_version or list(fact.state) > run.state_version[:4]
        ):
            run.state_version = [*fact.state, fact.state_type]
            run.state_time = fact.state_time
        run.first_event_time = earliest(run.first_event_time, fact.first_event)
        run.last_event_time = latest(run.last_event_time, fact.last_event)
        run.first_start_time = earliest(run.first_start_time, fact.first_start)
        run.is_streaming = run.is_streaming or fact.streaming
        run.emits_snapshots = run.emits_snapshots or fact.snapshots
        run.outputs_confirmed = run.outputs_confirmed or fact.outputs_confirmed
        merge_facets(run.facets, run.facet_versions, fact.facets)
        parent_key = _newer_parent(run.facet_versions, fact.parent)
        if parent_key is not None:
            run.parent_run_id = parents[parent_key]
        _derived_run_fields(run)
        if before is not None and run.started_at != before:
            left[run.id] = before
    bulk_update(runs, RUN_FIELDS)
    # A text runId's runs share no run_uuid: they are recomputed by their text.
    texts = sorted({text for fact in wanted.values() if (text := fact.text_run_id)})
    mark_shared_run_ids(sorted({f.run_uuid for f in wanted.values() if f.text_run_id is None}))
    mark_shared_run_texts(texts)
    return ids, {}, left, {run.id for run in runs if run.emits_snapshots}


def _derived_run_fields(run: Run) -> None:
    """Fields that are pure functions of the merged facts (see ADR 0021)."""
    if run.state_version:
        event_type = run.state_version[4]
        state = event_type if event_type in RunState.values else RunState.OTHER
        if run.is_streaming and state not in TERMINAL_STATES:
            state = RunState.RUNNING
        run.state = state
    else:
        run.state = RunState.UNKNOWN
    run.started_at = run.first_start_time or run.first_event_time
    run.ended_at = run.state_time if run.state in TERMINAL_STATES else None
    run.duration = run.ended_at - run.started_at if run.ended_at and run.started_at else None
    nominal_start, nominal_end = nominal_time.times(run.facets)
    run.nominal_start_time = parse_timestamp(nominal_start)
    run.nominal_end_time = parse_timestamp(nominal_end)
    run.error_message = producer_text(error_message.message(run.facets))  # stored redacted
    run.tags = labels.projected_tags(run.facets, [])  # a run has no steward labels


__all__ = [
    "derive_jobs",
    "derive_runs",
    "ensure_jobs",
    "ensure_referenced_runs",
    "iso",
    "lock_held_runs",
    "merge_facets",
    "merge_jobs",
    "referenced_runs",
    "split_runs",
]

"""Which runs and which of their outputs count as writes (ADR 0069): the one choice every
surface reads.

A run that COMPLETEd wrote its outputs, and so does a streaming run while it is RUNNING
(it writes before it ends; Marquez versions a streaming job's outputs as they come too); a
run that FAILed, was ABORTed or has not ended only *attempted* its inputs and outputs.
Marquez creates a batch job's output dataset version only when a run completes, and a data
engineer debugging a failed task expects the table it failed to write to show no new
version. So a dataset's last modification, current version, versions and producing jobs
come from writes only; edges keep every run and count the writes beside them
(``completed_run_count``, kept by derivation with ``write_sql``), and a run's inputs and
outputs say ``attempted`` when they are no write.

Of a write run's outputs, the writes are those its *write events* named, when one named
any (``RunDataset.confirmed``, ``Run.outputs_confirmed``); else all of them. A write event
is one whose own type is a write by ``is_write``: a COMPLETE, or a RUNNING of a streaming
job (an edge API event is its run's COMPLETE). Producers plan on START and report on
COMPLETE: Airflow's SQL parser lists every table of ``DROP TABLE IF EXISTS report, clean,
raw`` as the START's outputs while the COMPLETE names only the table created, and Marquez
versions what the COMPLETE names. A run whose write events list no output (``outputs: []``
or none: producers that list datasets on START only) keeps all its outputs as writes. Both
facts only ever turn true (OR-merged), so the answer is the same in any order of the run's
events. Inputs are a run's reads: the run's state alone decides whether they were attempted.
"""

from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from catalog.models.edges import JobLineageEdge
from catalog.models.jobs_runs import Direction, JobDataset, Run, RunDataset, RunState

# The run states whose outputs are writes; a streaming run's RUNNING too.
WRITE_STATES: tuple[str, ...] = (RunState.COMPLETE.value,)
STREAMING_WRITE_STATE = RunState.RUNNING.value


def is_write(state: str, streaming: bool = False) -> bool:
    """Whether a run in ``state`` is a write (else its inputs and outputs were only
    attempted); which of its outputs it wrote is ``row_is_write``."""
    return state in WRITE_STATES or (streaming and state == STREAMING_WRITE_STATE)


def row_is_write(run: Run, row: RunDataset) -> bool:
    """Whether ``run``'s input or output ``row`` is a write: the run is one and, for an
    output, a write event of the run named it, or none named any output."""
    return link_is_write(run, row.direction, row.confirmed)


def link_is_write(run: Run, direction: str, confirmed: bool) -> bool:
    """``row_is_write`` of a row read as values, its ``direction`` and ``confirmed`` (a run's
    list of its inputs or outputs, ADR 0186)."""
    if not is_write(run.state, run.is_streaming):
        return False
    return direction != Direction.OUTPUT or confirmed or not run.outputs_confirmed


def write_sql(run: str = "r", row: str | None = None) -> str:
    """``is_write`` in SQL over the run table aliased ``run``; with ``row`` (a run-dataset
    table alias), ``row_is_write`` of that row (derivation's edge rows, version reads)."""
    states = ", ".join(f"'{state}'" for state in WRITE_STATES)
    run_rule = (
        f"({run}.state IN ({states}) OR ({run}.is_streaming AND "
        f"{run}.state = '{STREAMING_WRITE_STATE}'))"
    )
    if row is None:
        return run_rule
    return (
        f"({run_rule} AND ({row}.direction <> '{Direction.OUTPUT.value}' OR {row}.confirmed "
        f"OR NOT {run}.outputs_confirmed))"
    )


def newest_window_sql(run_id: str, last_seen: str) -> str:
    """Whether a run's dataset (its rows' ``last_seen``, an aggregate) or column fact (its
    ``last_seen``) is in its newest window, in SQL: always, but for a run whose events are
    each complete for their window (``Run.emits_snapshots``, ADR 0091), where only the
    datasets and column facts the newest event naming any dataset named are (a snapshot
    replaces the one before it; the spec's COMPLETE_SNAPSHOT). ``last_seen`` is
    GREATEST-merged, so any order of the events gives the same window. A CASE, so a run
    that is not one reads nothing more."""
    return (
        f"CASE WHEN (SELECT nw.emits_snapshots FROM catalog_run nw WHERE nw.id = {run_id})"
        f" THEN {last_seen} >= (SELECT MAX(nd.last_seen) FROM catalog_run_dataset nd"
        f" WHERE nd.run_id = {run_id}) ELSE true END"
    )


def window_start_sql(run: str) -> str:
    """When the newest window of the run row aliased ``run`` began, in SQL: the
    ``last_seen`` a row or fact needs to be in it (``newest_window_sql``'s bound, read once
    per run where a statement meets many facts of few runs); NULL for a run that is no
    snapshot run, whose every row counts."""
    return (
        f"CASE WHEN {run}.emits_snapshots THEN (SELECT MAX(nd.last_seen)"
        f" FROM catalog_run_dataset nd WHERE nd.run_id = {run}.id) END"
    )


def completed(prefix: str = "run__") -> Q:
    """The filter that keeps run-dataset rows that are writes (``row_is_write``), their
    run reached through ``prefix``."""
    run = Q(**{f"{prefix}state__in": WRITE_STATES}) | Q(
        **{f"{prefix}is_streaming": True, f"{prefix}state": STREAMING_WRITE_STATE}
    )
    named = (
        ~Q(direction=Direction.OUTPUT)
        | Q(confirmed=True)
        | Q(**{f"{prefix}outputs_confirmed": False})
    )
    return run & named


def writes(alias_ids: Any) -> QuerySet[RunDataset]:
    """The writes of the aliases ``alias_ids`` (ids or a subquery): the outputs of their
    completed runs that are writes, one row per (run, alias). A dataset version is such a
    write."""
    return RunDataset.objects.filter(
        completed(), alias_id__in=alias_ids, direction=Direction.OUTPUT
    )


# (job or dataset id, direction) → (runs, completed runs) of job edges.
EdgeCounts = dict[tuple[int, str], tuple[int, int]]


def _edge_counts(fixed: dict[str, int], key: str, ids: Any) -> EdgeCounts:
    """(``key``'s id, direction) → (runs, completed runs) of the job edges matching
    ``fixed`` whose ``key`` is among ``ids`` (bounded by the caller)."""
    rows = JobLineageEdge.objects.filter(**fixed, **{f"{key}__in": ids}).values_list(
        key, "direction", "run_count", "completed_run_count"
    )
    return {(other, direction): (runs, done) for other, direction, runs, done in rows}


def only_attempted(declared: bool, runs: int, completed: int) -> bool:
    """A job that ran against a dataset but never completed a run that did: its output is
    no write (not a producing job), though a job that declares it stays its producer."""
    return not declared and runs > 0 and completed == 0


def produced_by(job_id: int) -> Q:
    """The datasets ``job_id`` produces, as a filter over datasets: those it declares as
    outputs, and those a run of it wrote (``only_attempted``'s rule: a job edge out of the
    job that counts a completed run)."""
    declared = JobDataset.objects.filter(
        job_id=job_id, alias__dataset=OuterRef("pk"), direction=Direction.OUTPUT, declared=True
    )
    written = JobLineageEdge.objects.filter(
        job_id=job_id,
        dataset=OuterRef("pk"),
        direction=Direction.OUTPUT,
        completed_run_count__gt=0,
    )
    return Q(Exists(declared)) | Q(Exists(written))


def dataset_counts(job_id: int, dataset_ids: Any) -> EdgeCounts:
    """(dataset id, direction) → (runs, completed runs) of ``job_id``'s edges with
    ``dataset_ids`` (the job detail's inputs and outputs, bounded by the caller)."""
    return _edge_counts({"job_id": job_id}, "dataset_id", dataset_ids)

"""Lineage and run change records (ADR 0088): a new upstream edge into a dataset, an edge
no longer current, a run that failed after its job had succeeded.

Each is a fact about what is stored, never about arrival order, so a batch recomputes
only what its runs can have changed and any order, batching or rederive records the same:

- **edge_added**: an edge into a dataset whose first sighting is later than the dataset's
  first upstream edge (the lineage a dataset is born with is not a change). For the
  targets of the batch's runs' edges, all their upstream edges are compared with that
  first sighting. Evidence: the edge's first run and the event of that run at that time.
- **edge_stopped**: between two consecutive COMPLETE runs of a job (by start, then run
  uuid: currency's order), an edge the earlier one produced and the later one did not.
  The later run superseded it; its COMPLETE event is the evidence.
- **run_failed**: a FAIL run whose previous finished run (COMPLETE or FAIL, same order) of
  the job was COMPLETE. Evidence: the FAIL event; the previous run is named.

A run's neighbours change when it arrives, finishes or moves (a late START moves its start
earlier, an event earlier than its first moves it earlier too, a START after its first
event later). So the batch's subjects are its runs, and the next finished and the next
COMPLETE run after each one's start now *and the start it had before the batch*: the run
that followed it where it was has a new previous run, whether or not a change named it.
(Only the runs whose start or state the batch changed can change another run's previous
one, and only those next after them, so with the stored changes a function of the runs
before the batch, they are after it too.) For each subject the changes it supersedes are
recomputed, those that no longer hold are deleted and the rest recorded through
``change_log.record``: a change a later-arriving, earlier event contradicts is withdrawn.
"""

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.db import connection

from catalog.models import ChangeKind, DatasetChange
from catalog.services.derivation import change_log

_FINISHED = "('COMPLETE', 'FAIL')"
RUN_KINDS = (ChangeKind.EDGE_STOPPED, ChangeKind.RUN_FAILED)

# The next run of a job after ``t`` among ``states`` (currency's order). NULLS FIRST changes
# no answer (no null start passes the filter) but is catalog_run_job_started_idx's order
# read backwards: with the default NULLS LAST the planner could not walk that index from
# ``t`` and read all the job's runs instead, for each of the batch's runs, twice (ADR 0182).
# The states are tested ``IS TRUE``, which no index can answer: as an index condition on
# catalog_run_state_idx they let the planner, on statistics taken when one job held most
# runs, walk every job's runs of the state from ``t`` and drop the other jobs' (ADR 0182).
_NEXT = """
    SELECT n.id FROM catalog_run n
    WHERE n.job_id = t.job_id AND (n.state IN {states}) IS TRUE AND n.started_at IS NOT NULL
      AND (n.started_at, n.run_uuid) > (t.started_at, t.run_uuid)
    ORDER BY n.started_at NULLS FIRST, n.run_uuid LIMIT 1
"""
_PREVIOUS = """
    SELECT p.id, p.run_uuid, p.state FROM catalog_run p
    WHERE p.job_id = s.job_id AND (p.state IN {states}) IS TRUE AND p.started_at IS NOT NULL
      AND (p.started_at, p.run_uuid) < (s.started_at, s.run_uuid)
    ORDER BY p.started_at DESC NULLS LAST, p.run_uuid DESC LIMIT 1
"""

# Each subject with its previous finished run and its previous COMPLETE run. A position is
# a batch run's start now or the start it left (``left``, before the batch).
_SUBJECTS = f"""
WITH touched AS MATERIALIZED (
    SELECT r.id, r.job_id, r.started_at, r.run_uuid FROM catalog_run r
    WHERE r.id = ANY(%(runs)s) AND r.started_at IS NOT NULL
),
position AS MATERIALIZED (
    SELECT job_id, started_at, run_uuid FROM touched
  UNION ALL SELECT r.job_id, k.started_at, r.run_uuid
    FROM unnest(%(left)s::bigint[], %(left_at)s::timestamptz[]) AS k(id, started_at)
    JOIN catalog_run r ON r.id = k.id
),
subject(id) AS (
    SELECT id FROM touched
  UNION SELECT x.id FROM position t CROSS JOIN LATERAL ({_NEXT.format(states=_FINISHED)}) x
  UNION SELECT x.id FROM position t CROSS JOIN LATERAL ({_NEXT.format(states="('COMPLETE')")}) x
)
SELECT s.id, s.job_id, s.state, s.run_uuid::text, s.run_id_text,
       COALESCE(s.ended_at, s.state_time, s.started_at),
       p.run_uuid::text, p.state, pc.id, pc.run_uuid::text
FROM catalog_run s
LEFT JOIN LATERAL ({_PREVIOUS.format(states=_FINISHED)}) p ON true
LEFT JOIN LATERAL ({_PREVIOUS.format(states="('COMPLETE')")}) pc ON true
-- An array, not IN (subquery): the planner merge-joined or hashed the subjects with the
-- whole of catalog_run, every run of every job for a batch's few dozen (ADR 0182).
WHERE s.id = ANY(ARRAY(SELECT id FROM subject)) AND s.started_at IS NOT NULL
ORDER BY s.id
"""

# _SUBJECTS planned as the walk from each run it is, whatever the statistics say: on a
# catalog_run grown since its last ANALYZE (a job's runs estimated at 31 where it had
# 8,000) the planner took bitmap scans of every run of the job, or of every COMPLETE one
# after the run, and a sort, for each of the batch's runs (ADR 0182). Sent in the same
# execute, so no statement more; the settings go back to their defaults after it.
_WALK = ("enable_seqscan", "enable_bitmapscan", "enable_sort")
_SUBJECTS_WALKED = (
    "".join(f"SET LOCAL {name} = off; " for name in _WALK)
    + _SUBJECTS
    + "".join(f"; SET LOCAL {name} TO DEFAULT" for name in _WALK)
)

# The edges a COMPLETE run's previous COMPLETE run produced and it did not.
_STOPPED = """
SELECT k.subject, e.target_id, e.source_id, e.job_id
FROM unnest(%(subjects)s::bigint[], %(previous)s::bigint[]) AS k(subject, previous)
JOIN catalog_lineage_edge_run er ON er.run_id = k.previous AND er.completed
JOIN catalog_lineage_edge e ON e.id = er.edge_id
WHERE NOT EXISTS (SELECT 1 FROM catalog_lineage_edge_run x
                  WHERE x.run_id = k.subject AND x.edge_id = er.edge_id AND x.completed)
ORDER BY 1, 2, 3, 4
"""

# A run's first event of a type (eventTime, then digest): the evidence of its state.
_EVENT = """
SELECT k.run_text, (SELECT ev.id FROM ingest_event ev
    WHERE md5(ev.run_id) = md5(k.run_text) AND ev.run_id = k.run_text
      AND ev.event_type = k.type ORDER BY ev.event_time, ev.digest LIMIT 1)
FROM unnest(%(runs)s::text[], %(types)s::text[]) AS k(run_text, type)
"""

# The targets of the runs' edges, and every upstream edge of theirs first seen after the
# target's first upstream edge, with the edge's first run and that run's event then.
_ADDED = """
WITH target AS MATERIALIZED (
    SELECT DISTINCT e.target_id AS id FROM catalog_lineage_edge_run er
    JOIN catalog_lineage_edge e ON e.id = er.edge_id WHERE er.run_id = ANY(%(runs)s)
),
born AS MATERIALIZED (
    SELECT t.id, (SELECT min(e.first_seen) FROM catalog_lineage_edge e
                  WHERE e.target_id = t.id) AS at
    FROM target t
)
SELECT b.id, e.source_id, e.job_id, e.first_seen, first_run.run_uuid::text,
       first_run.run_id_text,
       (SELECT ev.id FROM ingest_event ev
        WHERE md5(ev.run_id) = md5(first_run.run_id_text) AND ev.run_id = first_run.run_id_text
          AND ev.event_time = first_run.first_seen ORDER BY ev.digest LIMIT 1)
FROM born b
-- The targets again as an index condition: joined to the CTE alone, the planner merge-joined
-- it with the whole target index in order, reading every edge up to the batch's highest
-- target id (all 300,000 for a new dataset, 3-6 s a batch): a cost growing with the catalog
-- for an answer that does not (ADR 0106).
JOIN catalog_lineage_edge e ON e.target_id = b.id AND e.first_seen > b.at
    AND e.target_id = ANY(ARRAY(SELECT id FROM target))
-- The edge's first run (first seen, then run UUID): its earliest time, then the runs first
-- seen then, both on catalog_edge_run_first_idx (edge, first seen). Without that index every
-- run of the edge and each run's row were read to keep one: an edge added after its target's
-- first paid its whole history on every batch (ADR 0185). Asked as an equality, not as an
-- ORDER BY of both columns, the planner has no sort of the edge's runs to choose.
LEFT JOIN LATERAL (
    SELECT r.run_uuid, r.run_id_text, er.first_seen FROM catalog_lineage_edge_run er
    JOIN catalog_run r ON r.id = er.run_id
    WHERE er.edge_id = e.id AND er.first_seen = (
        SELECT min(f.first_seen) FROM catalog_lineage_edge_run f WHERE f.edge_id = e.id)
    ORDER BY r.run_uuid LIMIT 1) first_run ON true
ORDER BY 1, 2, 3
"""


def _key(*parts: Any) -> bytes:
    return hashlib.sha256("\x00".join(str(part) for part in parts).encode()).digest()


def _change(kind: ChangeKind, key: bytes, **values: Any) -> DatasetChange:
    return DatasetChange(kind=kind, before_hash=b"", after_hash=b"", key_hash=key, **values)


def record_run_changes(
    run_ids: Iterable[int], left: Mapping[int, datetime] | None = None
) -> list[DatasetChange]:
    """Recompute the lineage and run changes the runs (derived in this transaction) can
    have changed, ``left`` the starts the moved ones had before; the new change rows."""
    runs = sorted(set(run_ids))
    if not runs:
        return []
    return _run_changes(runs, dict(left or {})) + _added_edges(runs)


def _run_changes(runs: list[int], left: dict[int, datetime]) -> list[DatasetChange]:
    moved = sorted(left)
    with connection.cursor() as cursor:
        cursor.execute(
            _SUBJECTS_WALKED,
            {"runs": runs, "left": moved, "left_at": [left[run] for run in moved]},
        )
        while cursor.description is None:  # past the SETs' empty results, to the rows
            cursor.nextset()
        subjects = cursor.fetchall()
        completes = [row for row in subjects if row[2] == "COMPLETE" and row[8] is not None]
        cursor.execute(
            _STOPPED,
            {"subjects": [row[0] for row in completes], "previous": [row[8] for row in completes]},
        )
        stopped = cursor.fetchall()
        cursor.execute(
            _EVENT,
            {"runs": [row[4] for row in subjects], "types": [row[2] for row in subjects]},
        )
        events = dict(cursor.fetchall())
    by_id = {row[0]: row for row in subjects}
    wanted: list[DatasetChange] = []
    for _, job, state, uuid, text, at, previous, previous_state, _, _ in subjects:
        if state == "FAIL" and previous_state == "COMPLETE":
            wanted.append(
                _change(
                    ChangeKind.RUN_FAILED,
                    _key(ChangeKind.RUN_FAILED, job, uuid),
                    job_id=job,
                    changed_at=at,
                    event_id=events.get(text),
                    run_id=uuid,
                    previous_run_id=previous,
                )
            )
    for subject, target, source, job in stopped:
        row = by_id[subject]
        wanted.append(
            _change(
                ChangeKind.EDGE_STOPPED,
                _key(ChangeKind.EDGE_STOPPED, target, source, job, row[3]),
                dataset_id=target,
                source_id=source,
                job_id=job,
                changed_at=row[5],
                event_id=events.get(row[4]),
                run_id=row[3],
                previous_run_id=row[9],
            )
        )
    _delete_stale(
        DatasetChange.objects.filter(kind__in=RUN_KINDS, run_id__in=[row[3] for row in subjects]),
        {(row[1], row[3]) for row in subjects},
        wanted,
        lambda change: (change.job_id, change.run_id),
    )
    return change_log.record(wanted)


def _added_edges(runs: list[int]) -> list[DatasetChange]:
    with connection.cursor() as cursor:
        cursor.execute(_ADDED, {"runs": runs})
        found = cursor.fetchall()
        cursor.execute(
            "SELECT DISTINCT e.target_id FROM catalog_lineage_edge_run er "
            "JOIN catalog_lineage_edge e ON e.id = er.edge_id WHERE er.run_id = ANY(%s)",
            [runs],
        )
        targets = {row[0] for row in cursor.fetchall()}
    wanted = [
        _change(
            ChangeKind.EDGE_ADDED,
            _key(ChangeKind.EDGE_ADDED, target, source, job),
            dataset_id=target,
            source_id=source,
            job_id=job,
            changed_at=first_seen,
            event_id=event,
            run_id=uuid or "",
        )
        for target, source, job, first_seen, uuid, _, event in found
    ]
    _delete_stale(
        DatasetChange.objects.filter(kind=ChangeKind.EDGE_ADDED, dataset_id__in=sorted(targets)),
        targets,
        wanted,
        lambda change: change.dataset_id,
    )
    return change_log.record(wanted)


def _delete_stale(stored: Any, scope: set[Any], wanted: list[DatasetChange], scope_of: Any) -> None:
    """Delete the stored changes in ``scope`` that are not ``wanted`` any more."""
    keys = {change_log.natural_key(change) for change in wanted}
    stale = [
        change
        for change in stored.only(
            "id",
            "job_id",
            "dataset_id",
            "run_id",
            "alias_id",
            "before_hash",
            "after_hash",
            "key_hash",
        )
        if scope_of(change) in scope and change_log.natural_key(change) not in keys
    ]
    change_log.delete(stale)

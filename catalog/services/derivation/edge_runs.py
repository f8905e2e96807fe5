"""An edge's runs and its aggregate, for both edge tables: dataset → dataset lineage edges
(``edges.py``) and job ↔ dataset edges (``job_edges.py``).

An edge's aggregate (first and last seen, run count, last run, and what the last run
carries) is a pure function of its runs; the last run is the one seen last, ties broken by
run UUID (never by id, which follows arrival order). A batch rebuilds the (edge, run) rows
of its runs, then:
- edges that only gained runs fold in the batch's own rows: first/last seen only widen,
  the count grows by the new pairs, the completed count by the batch's completed pairs
  less those its runs had before (a run that completes or fails later moves it, ADR
  0069), the last run is the greater of the stored one and the batch's best. No
  statement reads another run of the edge, so the cost is independent of the edge's
  history (ADR 0025); a redelivered batch adds no pair and changes nothing;
- an edge that lost a run (datasets merged or split, a snapshot's newer window, a run's
  pairs cut at ``LINEAGE_MAX_RUN_EDGES``) is recomputed from all of its runs, and deleted
  by id when none is left. No NOT EXISTS on the edge-run table: when one edge holds most
  of its rows the planner reads it as an anti join over the whole table. A run another
  worker adds to the edge meanwhile cannot be lost: its row references the edge, so the
  batch deleting the edge, which found it empty before that row committed, waits for the
  other to commit, fails the foreign-key check and is derived again from the facts
  (``batch._apply``), now seeing the run. Batches of the edge's job take turns on the
  job's row; a merge of datasets recomputes other jobs' runs without it (ADR 0203).
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

# (edge id, run id, first seen, last seen, run UUID, completed?, *what the run carries)
EdgeRunRow = tuple[Any, ...]
_LAST = "ORDER BY er.last_seen DESC, r.run_uuid DESC"
_WINS = """(e.last_run_id IS NULL OR v.last_seen > e.last_seen OR (v.last_seen = e.last_seen
    AND v.run_uuid >= (SELECT run_uuid FROM catalog_run WHERE id = e.last_run_id)))"""


def columns_of(rows: list[tuple], width: int) -> list[list[Any]]:
    """``rows`` as ``width`` column arrays, the shape ``unnest(%s::T[], ...)`` takes."""
    columns: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    return columns


@dataclass(frozen=True)
class EdgeRuns:
    """The statements of one edge table and its (edge, run) table.

    ``carried``: (column, its value in the run ``r``) pairs the edge takes from its last
    run (the lineage edge's ``lineage_type`` and ``pipeline``, from the run's facets).
    ``stored``: columns of the (edge, run) rows themselves that the edge takes from its
    last run too (the job edge's ``via``, ADR 0060). A row is (edge, run, first, last, run
    UUID, whether the run completed (``catalog.models.writes``), *carried values, *stored values).
    """

    edges: str
    edge_runs: str
    carried: tuple[tuple[str, str], ...] = ()
    stored: tuple[str, ...] = ()
    # The summaries of runs retention removed (``retained.EDGE_SUMMARY``): an edge
    # recomputed from its runs adds them, and is not empty while it has one (ADR 0079).
    summary: str = ""
    delete_runs: str = field(init=False)
    insert_runs: str = field(init=False)
    aggregate: str = field(init=False)
    fold: str = field(init=False)
    delete_empty: str = field(init=False)
    add_summary: str = field(init=False)

    def __post_init__(self) -> None:
        carried = (*self.carried, *((name, f"er.{name}") for name in self.stored))
        names = [column for column, _ in carried]
        statements = {
            "delete_runs": f"DELETE FROM {self.edge_runs} WHERE run_id = ANY(%s) "
            "RETURNING edge_id, run_id, completed",
            "insert_runs": f"""
INSERT INTO {self.edge_runs} (edge_id, run_id, first_seen, last_seen, completed{
                "".join(f", {name}" for name in self.stored)
            })
SELECT * FROM unnest(
    %s::bigint[], %s::bigint[], %s::timestamptz[], %s::timestamptz[], %s::bool[]{
                ", %s::text[]" * len(self.stored)
            })
""",
            "aggregate": f"""
UPDATE {self.edges} e SET
    first_seen = a.first_seen, last_seen = a.last_seen, run_count = a.run_count,
    completed_run_count = a.completed_run_count,
    last_run_id = a.last_run_id{"".join(f", {name} = a.{name}" for name in names)}
FROM (
    SELECT er.edge_id, MIN(er.first_seen) AS first_seen, MAX(er.last_seen) AS last_seen,
           COUNT(*) AS run_count, COUNT(*) FILTER (WHERE er.completed) AS completed_run_count,
           (ARRAY_AGG(er.run_id {_LAST}))[1] AS last_run_id{
                "".join(f", (ARRAY_AGG({value} {_LAST}))[1] AS {name}" for name, value in carried)
            }
    FROM {self.edge_runs} er JOIN catalog_run r ON r.id = er.run_id
    WHERE er.edge_id = ANY(%s)
    GROUP BY er.edge_id
) a
WHERE e.id = a.edge_id
RETURNING e.id
""",
            "fold": f"""
UPDATE {self.edges} e SET
    first_seen = LEAST(e.first_seen, v.first_seen),
    last_seen = GREATEST(e.last_seen, v.last_seen),
    run_count = e.run_count + v.added,
    completed_run_count = e.completed_run_count + v.completed,
    last_run_id = CASE WHEN {_WINS} THEN v.run_id ELSE e.last_run_id END{
                "".join(
                    f", {name} = CASE WHEN {_WINS} THEN v.{name} ELSE e.{name} END"
                    for name in names
                )
            }
FROM unnest(
    %s::bigint[], %s::timestamptz[], %s::timestamptz[], %s::int[], %s::int[], %s::bigint[],
    %s::uuid[]{", %s::text[]" * len(names)}
) AS v(edge_id, first_seen, last_seen, added, completed, run_id, run_uuid{
                "".join(f", {name}" for name in names)
            })
WHERE e.id = v.edge_id
""",
            "delete_empty": f"DELETE FROM {self.edges} WHERE id = ANY(%s)",
            "add_summary": f"""
UPDATE {self.edges} e SET
    first_seen = CASE WHEN e.id = ANY(%(aggregated)s) THEN LEAST(e.first_seen, s.first_seen)
                      ELSE s.first_seen END,
    last_seen = CASE WHEN e.id = ANY(%(aggregated)s) THEN GREATEST(e.last_seen, s.last_seen)
                     ELSE s.last_seen END,
    run_count = CASE WHEN e.id = ANY(%(aggregated)s) THEN e.run_count ELSE 0 END + s.run_count,
    completed_run_count = CASE WHEN e.id = ANY(%(aggregated)s) THEN e.completed_run_count
                               ELSE 0 END + s.completed_run_count,
    last_run_id = CASE WHEN e.id = ANY(%(aggregated)s) THEN e.last_run_id END
FROM ({self.summary}) s
WHERE e.id = s.edge_id
RETURNING e.id
""",
        }
        for name, sql in statements.items():
            object.__setattr__(self, name, sql)

    def replace(
        self, cursor: Any, rows: list[EdgeRunRow], before: dict[tuple[int, int], bool]
    ) -> None:
        """Store a batch's (edge, run) ``rows`` (sorted) after ``delete_runs`` removed the
        ``before`` pairs of its runs (pair → whether it was completed), then bring the
        touched edges' aggregates up to date."""
        if rows:
            tail = 6 + len(self.carried)  # where a row's stored values start
            cursor.execute(
                self.insert_runs,
                columns_of([(*row[:4], row[5], *row[tail:]) for row in rows], 5 + len(self.stored)),
            )
        after = {(row[0], row[1]) for row in rows}
        lost = sorted({edge for edge, _ in set(before) - after})
        if lost:
            cursor.execute(self.aggregate, [lost])
            aggregated = {edge for (edge,) in cursor.fetchall()}
            if self.summary:
                cursor.execute(self.add_summary, {"lost": lost, "aggregated": sorted(aggregated)})
                aggregated |= {edge for (edge,) in cursor.fetchall()}
            empty = sorted(set(lost) - aggregated)
            if empty:
                cursor.execute(self.delete_empty, [empty])
        folds = fold_rows(rows, before, set(lost))
        if folds:
            cursor.execute(self.fold, columns_of(folds, 7 + len(self.carried) + len(self.stored)))


def fold_rows(
    rows: list[EdgeRunRow], before: dict[tuple[int, int], bool], lost: set[int]
) -> list[tuple[Any, ...]]:
    """Per edge not in ``lost``: (id, first, last, new pairs, change in completed pairs,
    best run, its UUID, *what it carries) of this batch's ``rows``, against the ``before``
    pairs of its runs; the best run is the one seen last, ties broken by UUID, as in the
    aggregate."""
    folds: dict[int, list[Any]] = {}
    for edge, run, first, last, run_uuid, completed, *carried in rows:
        if edge in lost:
            continue
        new = 0 if (edge, run) in before else 1
        # A pair counts as completed once: what it counted before is taken back.
        done = int(bool(completed)) - int(before.get((edge, run), False))
        best: tuple[datetime, UUID, int, list[Any]] = (last, run_uuid, run, carried)
        fold = folds.get(edge)
        if fold is None:
            folds[edge] = [first, last, new, done, best]
        else:
            fold[0], fold[1] = min(fold[0], first), max(fold[1], last)
            fold[2], fold[3] = fold[2] + new, fold[3] + done
            fold[4] = max(fold[4], best, key=lambda item: item[:2])
    return [
        (edge, first, last, added, done, best[2], best[1], *best[3])
        for edge, (first, last, added, done, best) in sorted(folds.items())
    ]

"""Run facts read back: what runs reported about the datasets they read and wrote
(``RunDatasetFacet``, derived in ``catalog/services/derivation/io_facets.py``), in one
shape for every surface: the run and dataset details of /api/v1, the Marquez mount's run
facets and dataset versions, the admin.

Each entry is one (run, dataset name, direction), one key per run-fact facet of the facet
table (``catalog/facets/``, its ``RunFactShape``): ``statistics`` (rows, bytes, files,
the output statistics for an output and the input statistics for an input),
``quality_metrics`` (rows, bytes, files, per-column metrics as the producer sent them) and
``assertions`` (assertion, success, column; name, severity, expected, actual) and
``subset`` (the partitions and locations an input's or output's condition names). Values
are the producer's: the API redacts them like every facet. Reads are bounded: a run's
entries by the inputs and outputs its detail shows (``catalog.reads.runs.shown_links``,
ADR 0168), a dataset's by its latest ``runs`` runs per alias (index
``catalog_run_ds_facet_alias_idx``), whatever the history.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import orjson
from django.db import connection

from catalog.facets import RUN_FACTS, run_tests
from catalog.models import RUNS_BY_START, Run
from catalog.models.writes import write_sql
from catalog.reads import runs as run_reads
from core.prepared import read_cursor

RELATED_LIMIT = 200
_ROWS_PER_RUN = 10  # five facets, two directions: a run's rows about one alias at most


def empty_entry(direction: str) -> dict[str, Any]:
    return {
        "direction": direction,
        "statistics": None,
        "quality_metrics": None,
        "assertions": [],
        "subset": None,
    }


def fold(entry: dict[str, Any], name: str, value: Any) -> None:
    """Put one stored facet into its entry's shape."""
    shape = RUN_FACTS.get(name)
    if shape is None or not isinstance(value, dict):
        return
    # A facet of the entry's own direction (an input's inputStatistics) beats one of the
    # other direction filling the same place.
    if shape.direction in (None, entry["direction"]) or entry[shape.entry_key] is None:
        entry[shape.entry_key] = shape.shape(value)


def of_run(run_id: int) -> list[dict[str, Any]]:
    """The run's facts about its first ``RUN_LINKS_SHOWN`` inputs and outputs by id (what
    its detail shows, ADR 0168), by direction and alias: one statement on
    catalog_run_ds_run_idx, however many datasets the run read and wrote."""
    return of_links(run_reads.shown_links(run_id))


def of_links(links: Iterable[Any]) -> list[dict[str, Any]]:
    """The facts of a run's inputs and outputs ``links`` (RunDataset rows read by
    ``catalog.reads.runs.shown_links``: their facts, alias and dataset), by direction and
    alias: a run's detail reports about the inputs and outputs it shows (ADR 0168), so no
    further read."""
    entries = []
    for link in sorted(links, key=lambda link: (link.direction, link.alias_id)):
        facts = _json(link.facts)
        if not facts:
            continue
        alias, dataset = link.alias, link.alias.dataset
        entry = {
            "dataset": (
                {"id": dataset.id, "namespace": dataset.namespace, "name": dataset.name}
                if dataset is not None
                else None
            ),
            "alias": {"namespace": alias.namespace, "name": alias.name, "reason": alias.reason},
            **empty_entry(link.direction),
        }
        for name in sorted(facts):  # by name, as the facts were read before (fold's order)
            fold(entry, name, facts[name])
        entries.append(entry)
    return entries


def latest_facts_sql(aliases: str, runs: int = 10) -> str:
    """SQL: the facts the latest ``runs`` runs reported about the aliases ``aliases`` (SQL
    of a set of alias ids, as ``a(id)``), at most ``runs`` runs' rows per alias by its index:
    (run_id, run_uuid, job_id, job_namespace, job_name, direction, name, value), to be
    ordered by run_id descending, direction and name, and folded by ``dataset_entries``.
    ``of_dataset`` reads it; the dataset detail reads it beside its other rows in one
    statement (``catalog.reads.datasets.detail_rows``)."""
    return f"""
SELECT x.run_id, r.run_uuid, j.id AS job_id, j.namespace AS job_namespace, j.name AS job_name,
       x.direction, x.name, x.value
FROM {aliases} AS a(id)
CROSS JOIN LATERAL (
    SELECT f.run_id, f.direction, f.name, f.value FROM catalog_run_dataset_facet f
    WHERE f.alias_id = a.id ORDER BY f.run_id DESC LIMIT {runs * _ROWS_PER_RUN}
) x
JOIN catalog_run r ON r.id = x.run_id
JOIN catalog_job j ON j.id = r.job_id
"""


_OF_DATASET = (
    latest_facts_sql("unnest(%(aliases)s::bigint[])")
    + "ORDER BY x.run_id DESC, x.direction, x.name"
)


def of_dataset(alias_ids: list[int]) -> list[dict[str, Any]]:
    """The facts the latest 10 runs reported about the dataset (its aliases), newest run
    first: one entry per (run, direction). One statement of a fixed text, prepared on a kept
    connection (ADR 0119)."""
    if not alias_ids:
        return []
    with read_cursor() as cursor:  # a fixed text: prepared on a kept connection (ADR 0119)
        cursor.execute(_OF_DATASET, {"aliases": alias_ids})
        return dataset_entries(cursor.fetchall())


def dataset_entries(rows: list[tuple[Any, ...]], runs: int = 10) -> list[dict[str, Any]]:
    """``latest_facts_sql``'s rows, in its order, as entries: one per (run, direction) of
    the latest ``runs`` runs, newest first."""
    entries: dict[tuple[Any, str], dict[str, Any]] = {}
    kept: list[Any] = []
    for run_id, run_uuid, job_id, namespace, job_name, direction, name, value in rows:
        if run_id not in kept:
            if len(kept) >= runs:
                break
            kept.append(run_id)
        entry = entries.get((run_id, direction))
        if entry is None:
            entry = entries[(run_id, direction)] = {
                "run_id": run_uuid,
                "job": {"id": job_id, "namespace": namespace, "name": job_name},
                **empty_entry(direction),
            }
        fold(entry, name, _json(value))
    return list(entries.values())


# Marquez's dataset versions (api/marquez/resources.py): a version is a write (a completed
# run's output its COMPLETE named, catalog.models.writes, ADR 0069), current from its first write
# until the next one; a failed run, or a table only a START listed, made no version and
# ends none. Its facets are the writer's output facts, then the facts of the runs that
# read the dataset while that version was current, oldest read first (Marquez attaches an
# input's facets to the dataset's current version and merges a version's facets in event
# order, later ones winning).
_OF_VERSIONS = """
WITH writes AS (
    SELECT w.run_id, MIN(w.first_seen) AS made
    FROM catalog_dataset_alias a
    JOIN catalog_run_dataset w ON w.alias_id = a.id AND w.direction = 'output'
    JOIN catalog_run r ON r.id = w.run_id
    WHERE a.dataset_id = %(dataset)s AND {writes}
    GROUP BY w.run_id
), versions AS (
    SELECT * FROM (
        SELECT run_id, made, LEAD(made) OVER (ORDER BY made, run_id) AS replaced FROM writes
    ) v WHERE v.run_id = ANY(%(runs)s)
), reads AS (
    SELECT x.run_id, x.name, x.value, MIN(r.first_seen) OVER (PARTITION BY x.run_id) AS read_at
    FROM catalog_dataset_alias a
    CROSS JOIN LATERAL (
        SELECT f.run_id, f.alias_id, f.name, f.value FROM catalog_run_dataset_facet f
        WHERE f.alias_id = a.id AND f.direction = 'input'
        ORDER BY f.run_id DESC LIMIT %(rows)s::bigint
    ) x
    JOIN catalog_run_dataset r
        ON r.run_id = x.run_id AND r.alias_id = x.alias_id AND r.direction = 'input'
    WHERE a.dataset_id = %(dataset)s
)
SELECT v.run_id, 0 AS side, v.made AS at, f.run_id AS reporter, f.name, f.value
FROM versions v
JOIN catalog_dataset_alias a ON a.dataset_id = %(dataset)s
JOIN catalog_run_dataset_facet f
    ON f.run_id = v.run_id AND f.alias_id = a.id AND f.direction = 'output'
UNION ALL
SELECT v.run_id, 1, r.read_at, r.run_id, r.name, r.value
FROM versions v
JOIN reads r ON r.read_at >= v.made AND (v.replaced IS NULL OR r.read_at < v.replaced)
ORDER BY 1, 2, 3, 4, 5
""".replace("{writes}", write_sql("r", "w"))


def of_versions(dataset_id: int, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per writing run in ``run_ids`` (a page of the dataset's versions), the run facts
    Marquez keeps as facets of that version, by facet name, as the producer sent them: the
    writer's ``outputStatistics`` (and its other output facts), and the ``inputStatistics``,
    ``dataQualityMetrics`` and ``dataQualityAssertions`` of the runs that read the dataset
    while the version was current (the last reader's wins). Bounded: the readers' facts
    come from the dataset's latest ``len(RUN_FACTS) * RELATED_LIMIT`` input facts per alias."""
    if not run_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            _OF_VERSIONS,
            {"dataset": dataset_id, "runs": run_ids, "rows": len(RUN_FACTS) * RELATED_LIMIT},
        )
        rows = cursor.fetchall()
    facets: dict[int, dict[str, Any]] = defaultdict(dict)
    for run_id, _side, _at, _reporter, name, value in rows:
        facets[run_id][name] = _json(value)  # in order: a later read overrides
    return dict(facets)


def _json(value: Any) -> Any:
    if isinstance(value, str | bytes):
        return orjson.loads(value)
    return value


# A job's latest test results: the newest of its latest runs (by start, placeholders last: the
# job detail's latest run order, RUNS_BY_START) that reported a test facet. Bounded: a job
# whose last LATEST_TESTS_RUNS runs reported none shows none.
LATEST_TESTS_RUNS = 50


def latest_tests(job_id: int) -> dict[str, Any] | None:
    """The run (id, state, start) and its test results, or None. Producer text, as sent:
    the caller redacts."""
    recent = Run.objects.filter(job_id=job_id).order_by(*RUNS_BY_START)
    run = (
        Run.objects.filter(id__in=recent.values("id")[:LATEST_TESTS_RUNS])
        .filter(facets__has_key=run_tests.NAME)
        .order_by(*RUNS_BY_START)
        .only("run_uuid", "state", "started_at", "facets")
        .first()
    )
    if run is None:
        return None
    return {
        "run_id": run.run_uuid,
        "state": run.state,
        "started_at": run.started_at,
        "tests": run_tests.results(run.facets),
    }

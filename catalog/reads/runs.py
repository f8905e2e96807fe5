"""Runs: by runId, a job's runs by page, and the dataset versions each read and wrote."""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import orjson
from django.db import connection
from django.db.models import F, JSONField, QuerySet
from django.db.models.expressions import RawSQL
from django.db.models.lookups import Exact

from catalog.models import RUNS_BY_START, Direction, Job, Run, RunDataset, writes
from catalog.models.jobs_runs import RUN_LINKS_SHOWN
from catalog.reads.counting import Page, offset_page
from ingest.models import Event

# (run id, direction, dataset namespace, dataset name)
RunDatasetKey = tuple[int, str, str, str]


def find_run(run_uuid: UUID) -> Run | None:
    """The run of that runId, its job selected."""
    return Run.objects.filter(run_uuid=run_uuid).select_related("job").first()


# A run's facts about one of its inputs or outputs (RunDatasetFacet), by facet name: one
# probe beside the link, on catalog_run_ds_facet_uniq (run, alias, direction).
_LINK_FACTS = (
    "SELECT jsonb_object_agg(f.name, f.value) FROM catalog_run_dataset_facet f"
    " WHERE f.run_id = catalog_run_dataset.run_id"
    " AND f.alias_id = catalog_run_dataset.alias_id"
    " AND f.direction = catalog_run_dataset.direction"
)

# What a run's detail shows of a link, its alias and its dataset (api/serializers.py).
_SHOWN_COLUMNS = (
    "run_id",
    "alias_id",
    "direction",
    "first_seen",
    "last_seen",
    "confirmed",
    "alias__namespace",
    "alias__name",
    "alias__reason",
    "alias__dataset__namespace",
    "alias__dataset__name",
)


def shown_links(run_id: int, limit: int = RUN_LINKS_SHOWN) -> QuerySet[RunDataset]:
    """The run's first ``limit`` inputs and first ``limit`` outputs by id, by direction and
    id, each with its alias and dataset (the columns a detail shows) and ``facts``: what the
    run reported about it (its RunDatasetFacet values by facet name, ADR 0061), or None.
    One statement, a UNION ALL of one read per direction, each on catalog_run_ds_run_idx
    ``(run, direction, id)`` stopping after ``limit`` rows: a run that read 50,000 datasets
    costs its detail what a run of ``limit`` does (ADR 0168). One slice of both ordered by
    direction would give a run of ``2 x limit`` inputs no output at all; one window over
    the run's rows numbered them all."""
    first = [
        links(run_id, direction)
        .annotate(facts=RawSQL(f"({_LINK_FACTS})", (), output_field=JSONField()))
        .order_by("id")[:limit]
        for direction in Direction
    ]
    return first[0].union(*first[1:], all=True).order_by("direction", "id")


# What a run's link list shows of each (api.list_rows.run_link_item), ``id`` its cursor.
LINK_ROW_COLUMNS = (
    "id",
    "direction",
    "confirmed",
    "first_seen",
    "last_seen",
    "alias__namespace",
    "alias__name",
    "alias__reason",
    "alias__dataset_id",
    "alias__dataset__namespace",
    "alias__dataset__name",
)


def link_rows(run_id: int, direction: str) -> Any:
    """Every input (or output) of the run as ``LINK_ROW_COLUMNS`` dicts, unordered:
    /runs/{runId}/inputs and /outputs page through it by id, a range of
    catalog_run_ds_run_idx ``(run, direction, id)`` a page, so a page deep in a run of
    50,000 inputs costs what the first does, and its first ``RUN_LINKS_SHOWN`` are those
    the detail shows (``shown_links``). Rows, not model instances through their serializer
    (ADR 0105): a page of 500 of those cost about 0.4 ms an item (ADR 0186)."""
    return RunDataset.objects.filter(run_id=run_id, direction=direction).values(*LINK_ROW_COLUMNS)


def links(run_id: int, direction: str) -> QuerySet[RunDataset]:
    """Every input (or output) of the run, each with its alias and dataset (the columns a
    detail shows), unordered: ``shown_links`` reads the first ``RUN_LINKS_SHOWN`` by id."""
    return (
        RunDataset.objects.filter(run_id=run_id, direction=direction)
        .select_related("alias__dataset")
        .only(*_SHOWN_COLUMNS)
    )


# What a run's detail shows of an event (api/serializers.py).
_EVENT_COLUMNS = ("id", "event_type", "event_time", "received_at", "derivation_status")


def shown_events(run: Run, limit: int) -> list[Event]:
    """The first ``limit`` events that made the run, by eventTime and id.
    Found by the runId as sent, and of the run's own job when other jobs sent that runId too
    (ADR 0028). A range of ingest_event_run_time_idx ``(md5(run_id), event_time, id)`` read
    in order: a streaming run's 100,000 heartbeats cost its detail what 200 events do, where
    an index on md5(run_id) alone had every one read and sorted (ADR 0181)."""
    events = Event.objects.filter(run_id=run.run_id_text)
    if run.shares_run_id:  # the other jobs' events carry the same runId
        # Plain equality, not ``job_name=`` (DigestExact): offered ingest_event_job_md5,
        # PostgreSQL read and sorted all of the job's events instead (a streaming job's
        # are its run's). Checked on the rows of the run's range, which are in order.
        events = events.filter(
            Exact(F("job_namespace"), run.job.namespace), Exact(F("job_name"), run.job.name)
        )
    return list(events.only(*_EVENT_COLUMNS).order_by("event_time", "id")[:limit])


def job_runs(job: Job, offset: int, limit: int) -> Page[Run]:
    """A job's started runs, newest first, their job selected. Runs known only from a
    child's parent facet have no start: Marquez never saw them."""
    queryset = Run.objects.filter(job=job, started_at__isnull=False)
    # No NULL is left to place: RUNS_BY_START is the order catalog_run_job_started_idx holds.
    return offset_page(queryset, RUNS_BY_START, offset, limit, related=("job",))


@dataclass
class RunDatasets:
    """The datasets runs read and wrote (in order), and the input/output facets each run
    sent about each (statistics, data quality: run facts, ADR 0061)."""

    links: list[RunDatasetKey] = field(default_factory=list)
    facets: dict[RunDatasetKey, dict[str, Any]] = field(default_factory=lambda: defaultdict(dict))


# Per run of %(runs)s and direction, its first %(limit)s links by id that name a dataset, on
# catalog_run_ds_run_idx (run, direction, id): a scan that stops there, however many the
# run has (ADR 0168). Outputs only of a run that is a write (its state decides once per
# run, before any row is read) and of those only its writes (``writes.completed``). Each
# link with its facts by name (catalog_run_ds_facet_uniq), in the order the answer shows
# them: by run, direction, dataset, alias.
_RUN_DATASETS = """
SELECT l.run_id, l.direction, d.namespace, d.name,
       (SELECT jsonb_object_agg(f.name, f.value) FROM catalog_run_dataset_facet f
        WHERE f.run_id = l.run_id AND f.alias_id = l.alias_id AND f.direction = l.direction)
FROM catalog_run r
CROSS JOIN LATERAL (
    (SELECT w.run_id, w.direction, w.alias_id, a.dataset_id
     FROM catalog_run_dataset w JOIN catalog_dataset_alias a ON a.id = w.alias_id
     WHERE w.run_id = r.id AND w.direction = 'input' AND a.dataset_id IS NOT NULL
     ORDER BY w.id LIMIT %(limit)s)
    UNION ALL
    (SELECT w.run_id, w.direction, w.alias_id, a.dataset_id
     FROM catalog_run_dataset w JOIN catalog_dataset_alias a ON a.id = w.alias_id
     WHERE w.run_id = r.id AND w.direction = 'output' AND a.dataset_id IS NOT NULL
       AND {is_write} AND (w.confirmed OR NOT r.outputs_confirmed)
     ORDER BY w.id LIMIT %(limit)s)
) l
JOIN catalog_dataset d ON d.id = l.dataset_id
WHERE r.id = ANY(%(runs)s::bigint[])
ORDER BY l.run_id, l.direction, l.dataset_id, l.alias_id
""".replace("{is_write}", writes.write_sql("r"))


def run_datasets(run_ids: list[int], limit: int) -> RunDatasets:
    """One statement for any number of runs: of each run, at most ``limit`` inputs and
    ``limit`` outputs (the first by id; two aliases of one dataset show it once), and the
    facets it sent about each, whatever the run's size (ADR 0168).
    Every input, and the outputs that are writes (``catalog.models.writes``): a dataset version is
    a write, so a failed run has none and a completed one those its COMPLETE named."""
    answer = RunDatasets()
    if not run_ids:
        return answer
    with connection.cursor() as cursor:
        cursor.execute(_RUN_DATASETS, {"runs": run_ids, "limit": limit})
        rows = cursor.fetchall()
    for run_id, direction, namespace, name, facts in rows:
        key = (run_id, direction, namespace, name)
        if key not in answer.facets:
            answer.links.append(key)
        facets = answer.facets[key]  # the first alias of the dataset (by id) wins a name
        for facet, value in _json(facts or {}).items():
            facets.setdefault(facet, value)
    return answer


def _json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str | bytes) else value

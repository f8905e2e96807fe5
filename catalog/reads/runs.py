"""Runs: by runId, a job's runs by page, and the dataset versions each read and wrote."""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.db.models import Q

from catalog.facets import RUN_FACT_FACETS
from catalog.models import RUNS_BY_START, Direction, Job, Run, RunDataset, RunDatasetFacet, writes
from catalog.reads.counting import Page, offset_page

# (run id, direction, dataset namespace, dataset name)
RunDatasetKey = tuple[int, str, str, str]


def find_run(run_uuid: UUID) -> Run | None:
    """The run of that runId, its job selected."""
    return Run.objects.filter(run_uuid=run_uuid).select_related("job").first()


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


def run_datasets(run_ids: list[int], limit: int) -> RunDatasets:
    """Two queries for any number of runs: at most ``limit`` links and, per run-fact facet,
    ``limit`` facets.
    Every input, and the outputs that are writes (``catalog.models.writes``): a dataset version is
    a write, so a failed run has none and a completed one those its COMPLETE named."""
    answer = RunDatasets()
    answer.links = list(
        RunDataset.objects.filter(run_id__in=run_ids, alias__dataset__isnull=False)
        .filter(Q(direction=Direction.INPUT) | writes.completed())
        .order_by("run_id", "direction", "alias__dataset_id")
        .values_list("run_id", "direction", "alias__dataset__namespace", "alias__dataset__name")
        .distinct()[:limit]
    )
    rows = (
        RunDatasetFacet.objects.filter(run_id__in=run_ids, alias__dataset__isnull=False)
        .order_by("run_id", "direction", "alias__dataset_id", "name", "alias_id")
        .values_list(
            "run_id",
            "direction",
            "alias__dataset__namespace",
            "alias__dataset__name",
            "name",
            "value",
        )[: len(RUN_FACT_FACETS) * limit]
    )
    for run_id, direction, namespace, name, facet, value in rows:
        answer.facets[(run_id, direction, namespace, name)].setdefault(facet, value)
    return answer

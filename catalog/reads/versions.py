"""Dataset versions: a version is a completed run that wrote the dataset (newest first);
Marquez creates an output version only when a run completes, of the outputs its COMPLETE
names (catalog.models.writes, ADR 0069)."""

from typing import Any
from uuid import UUID

from catalog.models import Dataset, DatasetAlias, EventDataset, RunDataset
from catalog.models.writes import writes as completed_writes
from catalog.reads.counting import Page, offset_page

_WRITE = ("run", "run__job", "alias")  # what a version shows of its write


def _writes(dataset: Dataset) -> Any:
    aliases = list(DatasetAlias.objects.filter(dataset=dataset).values_list("id", flat=True))
    return completed_writes(aliases)


def dataset_writes(dataset: Dataset, offset: int, limit: int) -> Page[RunDataset]:
    """The dataset's writes, newest first, with their run, its job and the alias written."""
    return offset_page(_writes(dataset), ("-last_seen", "-id"), offset, limit, related=_WRITE)


def dataset_write(dataset: Dataset, run_uuid: UUID) -> RunDataset | None:
    """The write of that run (its newest, should a run write the dataset twice)."""
    writes = _writes(dataset).filter(run__run_uuid=run_uuid).select_related(*_WRITE)
    return writes.order_by("-last_seen").first()


def written_outputs(writes: list[RunDataset]) -> list[tuple[str, list[Any]]]:
    """The events of these writes' runs that wrote these aliases, oldest first: each as
    (the event's runId, its ``outputs`` as sent). One query for a page of writes."""
    links = (
        EventDataset.objects.filter(
            alias_id__in={write.alias_id for write in writes},
            role="output",
            event__run_id__in={write.run.run_id_text for write in writes},
        )
        .order_by("event__event_time", "event_id")
        .values_list("event__run_id", "event__payload__outputs")
    )
    return [(str(run_id), outputs or []) for run_id, outputs in links]

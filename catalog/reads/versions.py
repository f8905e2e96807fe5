"""Dataset versions: a version is a completed run that wrote the dataset (newest first);
Marquez creates an output version only when a run completes, of the outputs its COMPLETE
names (catalog.models.writes, ADR 0069)."""

from typing import Any
from uuid import UUID

import orjson
from django.db import connection

from catalog.models import Dataset, DatasetAlias, RunDataset
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


# The events read for a page of versions: each write's newest, at least two (a batch run's
# START and COMPLETE), this many in all for a page of more (ADR 0172).
WRITTEN_EVENTS_PER_PAGE = 100
_WRITTEN = """
SELECT e.run_id, e.payload -> 'outputs'
FROM unnest(%(runs)s::text[], %(aliases)s::bigint[]) AS w(run_text, alias_id)
CROSS JOIN LATERAL (
    SELECT x.id, x.event_time FROM ingest_event x
    WHERE md5(x.run_id) = md5(w.run_text) AND x.run_id = w.run_text
      AND EXISTS (SELECT 1 FROM catalog_event_dataset ed
                  WHERE ed.alias_id = w.alias_id AND ed.event_id = x.id AND ed.role = 'output')
    ORDER BY x.event_time DESC, x.id DESC LIMIT %(each)s
) AS n
JOIN ingest_event e ON e.id = n.id
ORDER BY n.event_time, n.id
"""


def written_outputs(writes: list[RunDataset]) -> list[tuple[str, list[Any]]]:
    """The events of these writes' runs that wrote these aliases, oldest first: each as
    (the event's runId, its ``outputs`` as sent). One query for a page of writes, of each
    write's newest events only (``WRITTEN_EVENTS_PER_PAGE``): a streaming run's heartbeats
    each name its outputs, and all of them, read whole, grew with the run (2,001 events of
    a 100-column schema: 68 MB and 3.2 s for one page; ADR 0172)."""
    pairs = sorted({(write.run.run_id_text, write.alias_id) for write in writes})
    if not pairs:
        return []
    each = max(2, WRITTEN_EVENTS_PER_PAGE // len(pairs))
    with connection.cursor() as cursor:
        cursor.execute(
            _WRITTEN,
            {
                "runs": [run for run, _ in pairs],
                "aliases": [alias for _, alias in pairs],
                "each": each,
            },
        )
        rows = cursor.fetchall()
    return [(str(run_id), _outputs(outputs)) for run_id, outputs in rows]


def _outputs(value: Any) -> list[Any]:
    """jsonb comes as text on Django's connections (or parsed, by the driver's loaders)."""
    if isinstance(value, str | bytes):
        value = orjson.loads(value)
    return value if isinstance(value, list) else []

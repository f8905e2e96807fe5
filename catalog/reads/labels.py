"""The tags in use, for Marquez's ``GET /tags`` (ADR 0083): the visible tags of the
labelled datasets and jobs, read through the partial indexes of labelled rows
(migration 0020), at most ``LABELLED_ROWS`` rows of each table."""

from catalog.facets import tags
from catalog.models import Dataset, Job

LABELLED_ROWS = 2000
MAX_NAMES = 1000


def tag_names() -> list[str]:
    """Every visible tag's Marquez name (its own or a column's), sorted, bounded."""
    names: set[str] = set()
    for model in (Dataset, Job):
        rows = model.objects.labelled().order_by("id").values_list("tags", flat=True)
        for entries in rows[:LABELLED_ROWS]:
            names.update(tags.marquez_names(entries))
            for field_names in tags.marquez_field_names(entries).values():
                names.update(field_names)
    return sorted(names)[:MAX_NAMES]

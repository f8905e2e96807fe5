"""The tags and owners in use, for Marquez's ``GET /tags`` and the admin's filters (ADR
0083): the visible ones of the labelled datasets and jobs, read through the partial indexes
of labelled rows (migration 0024), at most ``LABELLED_ROWS`` rows of each table; and the
stewards' tag descriptions (``TagDescription``, Marquez's ``PUT /tags/{tag}``)."""

from catalog.facets import tags
from catalog.models import Dataset, Job, TagDescription

LABELLED_ROWS = 2000
MAX_NAMES = 1000


def names_in_use(model: type[Dataset] | type[Job]) -> tuple[list[str], list[str]]:
    """(tag names as Marquez names them, owner names) visible on ``model``'s newest
    ``LABELLED_ROWS`` labelled rows, each sorted and bounded: one query."""
    rows = model.objects.labelled().order_by("-id").values_list("tags", "owners")
    tag_names: set[str] = set()
    owner_names: set[str] = set()
    for entries, owners in rows[:LABELLED_ROWS]:
        tag_names.update(tags.marquez_names(entries))
        for field_names in tags.marquez_field_names(entries).values():
            tag_names.update(field_names)
        owner_names.update(owner["name"] for owner in owners if not owner.get("hidden"))
    return sorted(tag_names)[:MAX_NAMES], sorted(owner_names)[:MAX_NAMES]


def tag_names() -> list[str]:
    """Every visible tag's Marquez name on datasets, their columns and jobs, sorted."""
    names = {name for model in (Dataset, Job) for name in names_in_use(model)[0]}
    return sorted(names)[:MAX_NAMES]


def described_tags() -> list[tuple[str, str | None]]:
    """Marquez's tags: every tag in use and every described one, by name, each with its
    description (None when it has none), at most ``MAX_NAMES``. A tag described before
    anything carries it is listed, as Marquez lists the tags it was given."""
    described = dict(
        TagDescription.objects.order_by("name").values_list("name", "description")[:MAX_NAMES]
    )
    names = sorted({*tag_names(), *described})[:MAX_NAMES]
    return [(name, described.get(name) or None) for name in names]

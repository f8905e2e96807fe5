"""The tags and owners in use, for Marquez's ``GET /tags`` and the admin's filters (ADR
0083): the visible ones of the labelled datasets and jobs, read through the partial indexes
of labelled rows (migration 0024), at most ``LABELLED_ROWS`` rows of each table; and the
stewards' tag descriptions (``TagDescription``, Marquez's ``PUT /tags/{tag}``).

Marquez pages its tags by name (``LIMIT :limit OFFSET :offset``), so ``described_tags``
answers a page: the first ``offset + limit`` names of each source are all a page of their
union can hold, and only the page's descriptions are read.
"""

from catalog.facets import tags
from catalog.models import Dataset, Job, TagDescription

LABELLED_ROWS = 2000
MAX_NAMES = 1000


def names_in_use(
    model: type[Dataset] | type[Job], count: int = MAX_NAMES
) -> tuple[list[str], list[str]]:
    """(tag names as Marquez names them, owner names) visible on ``model``'s newest
    ``LABELLED_ROWS`` labelled rows, each sorted, the first ``count`` of each: one query."""
    rows = model.objects.labelled().order_by("-id").values_list("tags", "owners")
    tag_names: set[str] = set()
    owner_names: set[str] = set()
    for entries, owners in rows[:LABELLED_ROWS]:
        tag_names.update(tags.marquez_names(entries))
        for field_names in tags.marquez_field_names(entries).values():
            tag_names.update(field_names)
        owner_names.update(owner["name"] for owner in owners if not owner.get("hidden"))
    return sorted(tag_names)[:count], sorted(owner_names)[:count]


def tag_names(count: int = MAX_NAMES) -> list[str]:
    """The first ``count`` visible tags' Marquez names on datasets, their columns and jobs,
    sorted."""
    names = {name for model in (Dataset, Job) for name in names_in_use(model, count)[0]}
    return sorted(names)[:count]


def described_tags(offset: int, limit: int) -> list[tuple[str, str | None]]:
    """A page of Marquez's tags: every tag in use and every described one, by name, ``limit``
    of them from ``offset``, each with its description (None when it has none). A tag
    described before anything carries it is listed, as Marquez lists the tags it was given.
    Three queries, and a fourth for the page's descriptions; the names read are at most
    ``offset + limit`` of each source (the mount caps both, api/marquez/paging.py)."""
    first = offset + limit
    described = TagDescription.objects.order_by("name").values_list("name", flat=True)[:first]
    names = sorted({*tag_names(first), *described})[offset:first]
    descriptions = dict(
        TagDescription.objects.filter(name__in=names).values_list("name", "description")
    )
    return [(name, descriptions.get(name) or None) for name in names]

"""``tags`` (job, run, dataset): the producer's tags, key and value, each with the
producer's own source; a dataset tag naming a ``field`` tags that column, as do a schema
field's own ``tags`` (ADR 0083)."""

from typing import Any

from catalog.facets.base import DATASET, JOB, RUN, Facet, opened
from catalog.facets.schema import field_tags
from catalog.names.naming import producer_text

NAME = "tags"
FACET = Facet(
    NAME,
    appears=(JOB, RUN, DATASET),
    schemas=("TagsJobFacet", "TagsRunFacet", "TagsDatasetFacet"),
    extracts="merged into the job's, run's or dataset's facets by version (the newest "
    "event's list wins); a tag with a `field`, and a schema field's own `tags`, tag that column",
    projects="Job.tags, Run.tags, Dataset.tags (key, value, field, origin; redacted), beside "
    "the steward's own tags, which may hide one (ADR 0083)",
    native="`tags` of jobs, runs and datasets (lists and details); `?tag=` on jobs and datasets; "
    "search",
    marquez="dataset `tags` and field `tags` (the key, `key:value` when valued); `GET /tags`",
)
# Bounds of a stored tag's parts (producer text, shown and filtered on).
KEY_LIMIT, VALUE_LIMIT, FIELD_LIMIT, ORIGIN_LIMIT = 200, 200, 500, 100


def entry(key: str, value: str = "", field: str = "", origin: str = "") -> dict[str, str]:
    """One tag as the catalog keeps it (before a source and a hidden mark are added)."""
    return {
        "key": producer_text(key, KEY_LIMIT),
        "value": producer_text(value, VALUE_LIMIT),
        "field": producer_text(field, FIELD_LIMIT),
        "origin": producer_text(origin, ORIGIN_LIMIT),
    }


def producer_tags(facets: Any) -> list[dict[str, str]]:
    """The tags the facets say, the holder's and its columns', without repeats, in order."""
    found = [
        entry(key, value, field, origin)
        for key, value, field, origin in _tags(opened(facets, NAME).get("tags"))
    ]
    for field, tags in field_tags(facets):
        found += [entry(key, value, field, origin) for key, value, _, origin in _tags(tags)]
    unique = {(tag["field"], tag["key"], tag["value"]): tag for tag in found}
    return [unique[place] for place in sorted(unique)]


def _tags(tags: Any) -> list[tuple[str, str, str, str]]:
    """(key, value, field, source) of each well-formed tag; a string tag is a bare key."""
    answer = []
    for tag in tags if isinstance(tags, list) else []:
        if isinstance(tag, str) and tag.strip():
            answer.append((tag, "", "", ""))
        elif isinstance(tag, dict) and isinstance(tag.get("key"), str) and tag["key"].strip():
            parts = [tag.get(part) for part in ("value", "field", "source")]
            answer.append((tag["key"], *(p if isinstance(p, str) else "" for p in parts)))
    return answer


def marquez_name(tag: dict[str, Any]) -> str:
    """A tag as Marquez names it: its key, ``key:value`` when it has a value."""
    return f"{tag['key']}:{tag['value']}" if tag.get("value") else tag["key"]


def marquez_names(entries: Any, field: str = "") -> list[str]:
    """The Marquez names of the visible projected tags (a row's ``tags``) of ``field`` ("":
    the holder's own), without repeats, in order."""
    listed = entries if isinstance(entries, list) else []
    names = [
        marquez_name(entry)
        for entry in listed
        if isinstance(entry, dict) and not entry.get("hidden") and entry.get("field", "") == field
    ]
    return sorted(set(names))


def marquez_field_names(entries: Any) -> dict[str, list[str]]:
    """Field name → the Marquez names of its visible tags."""
    listed = entries if isinstance(entries, list) else []
    fields = {entry.get("field", "") for entry in listed if isinstance(entry, dict)}
    return {field: marquez_names(entries, field) for field in fields if field}

"""``ownership`` (job and dataset): the owners of a job or dataset (ADR 0083)."""

from typing import Any

from catalog.facets.base import DATASET, JOB, Facet, opened
from catalog.names.naming import producer_text

NAME = "ownership"
FACET = Facet(
    NAME,
    appears=(JOB, DATASET),
    schemas=("OwnershipJobFacet", "OwnershipDatasetFacet"),
    extracts="merged into the job's or dataset's facets by version (the newest event's list wins)",
    projects="Job.owners, Dataset.owners (name, type; redacted), beside the steward's own "
    "owners, which may hide one (ADR 0083)",
    native="`owners` of jobs and datasets (lists and details), and in `facets`; `?owner=`; search",
    marquez="in the job's and the dataset's `facets`",
)
NAME_LIMIT, TYPE_LIMIT = 200, 100


def entry(name: str, type_: str = "") -> dict[str, str]:
    return {"name": producer_text(name, NAME_LIMIT), "type": producer_text(type_, TYPE_LIMIT)}


def owners(facets: Any) -> list[dict[str, str]]:
    """The owners the facet names (a name is required; the type is optional), in order."""
    found = {}
    listed = opened(facets, NAME).get("owners")
    for owner in listed if isinstance(listed, list) else []:
        if isinstance(owner, dict) and isinstance(owner.get("name"), str) and owner["name"]:
            kind = owner["type"] if isinstance(owner.get("type"), str) else ""
            found[(owner["name"], kind)] = entry(owner["name"], kind)
    return [found[key] for key in sorted(found)]

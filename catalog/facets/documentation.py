"""``documentation`` (job, dataset): the producer's description."""

from typing import Any

from catalog.facets.base import DATASET, JOB, Facet, present

NAME = "documentation"
FACET = Facet(
    NAME,
    appears=(JOB, DATASET),
    schemas=("DocumentationJobFacet", "DocumentationDatasetFacet"),
    extracts="merged into the job's or dataset's facets by version",
    projects="Job.description, Dataset.description (redacted, ADR 0056)",
    native="job and dataset `description`, and in `facets`",
    marquez="job and dataset `description`",
)


def description(facets: Any) -> Any:
    """The facet's description ("" when it has none), or None without the facet."""
    facet = present(facets, NAME)
    return None if facet is None else facet.get("description") or ""

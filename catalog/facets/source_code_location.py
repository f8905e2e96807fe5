"""``sourceCodeLocation`` (job): where the job's code lives."""

from typing import Any

from catalog.facets.base import JOB, Facet, opened

NAME = "sourceCodeLocation"
FACET = Facet(
    NAME,
    appears=(JOB,),
    schemas=("SourceCodeLocationJobFacet",),
    extracts="merged into the job's facets by version",
    projects="facets only",
    native="in the job's `facets`",
    marquez="job `location` (the facet's url)",
)


def url(facets: Any) -> Any:
    return opened(facets, NAME).get("url")

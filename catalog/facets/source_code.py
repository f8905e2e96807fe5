"""``sourceCode`` (job): the job's code.
Kept as sent, read by no projection."""

from catalog.facets.base import JOB, Facet

NAME = "sourceCode"
FACET = Facet(
    NAME,
    appears=(JOB,),
    schemas=("SourceCodeJobFacet",),
    extracts="merged into the job's facets by version",
    projects="facets only",
    native="in the job's `facets`",
    marquez="in the job's `facets`",
)

"""``sql`` (job): the query the job runs.
Kept as sent, read by no projection."""

from catalog.facets.base import JOB, Facet

NAME = "sql"
FACET = Facet(
    NAME,
    appears=(JOB,),
    schemas=("SQLJobFacet",),
    extracts="merged into the job's facets by version",
    projects="facets only",
    native="in the job's `facets`",
    marquez="in the job's `facets`",
)

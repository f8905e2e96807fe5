"""``ownership`` (job and dataset): the owners of a job or dataset.
Kept as sent, read by no projection."""

from catalog.facets.base import DATASET, JOB, Facet

NAME = "ownership"
FACET = Facet(
    NAME,
    appears=(JOB, DATASET),
    schemas=("OwnershipJobFacet", "OwnershipDatasetFacet"),
    extracts="merged into the job's or dataset's facets by version",
    projects="facets only",
    native="in the job's and the dataset's `facets`",
    marquez="in the job's and the dataset's `facets`",
)

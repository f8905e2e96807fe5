"""``storage`` (dataset): the storage layer and file format of a dataset.
Kept as sent, read by no projection."""

from catalog.facets.base import DATASET, Facet

NAME = "storage"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("StorageDatasetFacet",),
    extracts="merged into the dataset's facets by version",
    projects="facets only",
    native="in the dataset's `facets`",
    marquez="in the dataset's `facets`",
)

"""``dataSource`` (dataset): the source a dataset lives in."""

from typing import Any

from catalog.facets.base import DATASET, Facet, opened

NAME = "dataSource"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("DatasourceDatasetFacet",),
    extracts="merged into the dataset's facets by version",
    projects="facets only",
    native="in the dataset's `facets`",
    marquez="dataset `sourceName` (else the namespace), also per dataset version",
)


def source_name(facets: Any) -> Any:
    """The source's name as sent (the caller checks it is a string), or None."""
    return opened(facets, NAME).get("name")

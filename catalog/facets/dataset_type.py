"""``datasetType`` (dataset): what kind of dataset it is; a temporary job output folds away.

A dataset typed ``JOB_OUTPUT`` with subtype ``TEMPORARY`` is an intermediate result one job
hands the next (a Spark stage's shuffle, a dbt ephemeral model): the graph draws a job-to-job
link through it, not a node (issue 41 item 2, ADR 0089). It is still a dataset, readable by
id, with its aliases, facets and edges; only the graph's drawing of it changes.
"""

from typing import Any

from catalog.facets.base import DATASET, Facet, opened

NAME = "datasetType"
TYPE, SUBTYPE = "JOB_OUTPUT", "TEMPORARY"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("DatasetTypeDatasetFacet",),
    extracts="merged into the dataset's facets by version (observed and declared: a "
    "JobEvent's datasets are merged too)",
    projects="read when the graph is drawn: a JOB_OUTPUT of subType TEMPORARY folds into "
    "job-to-job `through` edges (graph, admin picture, Marquez /lineage; column lineage "
    "passes through it; ADR 0089), unless its writers x readers would pass the graph's "
    "edge limit (then drawn as it is, ADR 0172)",
    native="in the dataset's `facets`; the graph's `through` edges name the folded dataset",
    marquez="in the dataset's `facets`; /lineage links the jobs on either side directly",
)


def is_temporary(facets: Any) -> bool:
    """Whether a dataset's facets type it a temporary job output (a bad shape: no)."""
    facet = opened(facets, NAME)
    return facet.get("datasetType") == TYPE and facet.get("subType") == SUBTYPE


def temporary_lookup(field: str = "facets") -> dict[str, str]:
    """``is_temporary`` as Django lookups on a jsonb ``field`` (a filter or a Q), so a read
    of the rows can say it without reading the facets themselves."""
    return {f"{field}__{NAME}__datasetType": TYPE, f"{field}__{NAME}__subType": SUBTYPE}

"""``outputStatistics`` (output dataset): rows, bytes and files the run written."""

from catalog.facets._numbers import statistics
from catalog.facets.base import DATASET, OUTPUT, Facet, RunFactShape

NAME = "outputStatistics"
FACET = Facet(
    NAME,
    appears=(OUTPUT, DATASET),
    schemas=("OutputStatisticsOutputDatasetFacet",),
    extracts="from the output's outputFacets (or its dataset facets; the io facet wins in "
    "one event), per (run, alias, direction) by version",
    projects="RunDatasetFacet",
    native="run detail `dataset_facts[].statistics`, dataset detail `run_facts`",
    marquez="run `outputDatasetVersions[].facets`",
    run_fact=RunFactShape("statistics", statistics, direction="output"),
)

"""``inputStatistics`` (input dataset): rows, bytes and files the run read."""

from catalog.facets._numbers import statistics
from catalog.facets.base import DATASET, INPUT, Facet, RunFactShape

NAME = "inputStatistics"
FACET = Facet(
    NAME,
    appears=(INPUT, DATASET),
    schemas=("InputStatisticsInputDatasetFacet",),
    extracts="from the input's inputFacets (or its dataset facets; the io facet wins in "
    "one event), per (run, alias, direction) by version",
    projects="RunDatasetFacet",
    native="run detail `dataset_facts[].statistics`, dataset detail `run_facts`",
    marquez="run `inputDatasetVersions[].facets`",
    run_fact=RunFactShape("statistics", statistics, direction="input"),
)

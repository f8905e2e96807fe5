"""``columnLineage`` (output dataset): which input fields make each output field, and the
dataset-level dependencies (facet 1-2-0). Read by
``catalog/services/derivation/column_facts.py`` into column facts (ADR 0060)."""

from typing import Any

from catalog.facets.base import DATASET, OUTPUT, Facet, present

NAME = "columnLineage"
FACET = Facet(
    NAME,
    appears=(DATASET, OUTPUT),
    schemas=("ColumnLineageDatasetFacet",),
    extracts="on a run's output (and a JobEvent's declared output): one column fact per "
    "(target field, source, transformation); every source dataset named is an input of "
    "the run (via column_lineage); not merged into the dataset's facets",
    projects="ColumnLineageFact → ColumnLineageEdge; StaticColumnLineage for JobEvents; "
    "RunDataset/JobDataset inputs",
    native="graph column edges and dataset detail `column_lineage` "
    "(catalog/lineage/column_lineage.py)",
    marquez="dataset `columnLineage`, `/column-lineage` field nodes",
    kept_in_facets=False,
)


def of(dataset: dict[str, Any]) -> dict[str, Any] | None:
    """The facet of one input/output object of an event, or None."""
    return present(dataset.get("facets"), NAME)

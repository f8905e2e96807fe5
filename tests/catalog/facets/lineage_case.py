"""The ``lineage`` facet's case for test_facets_end_to_end.py (issue 41 item 7, ADR 0094):
the spec's dataset-to-dataset example on the world's output, derived with the experimental
setting on, read back through /api/v1 and the Marquez mount as column lineage. Its other
cases (off, JobEvent, RunEvent, no inputs, bad shapes) are in test_lineage_facet.py."""

from django.conf import settings
from django.test import override_settings

from catalog.facets import lineage
from tests.api.project_fixtures import derive
from tests.catalog.facets.lineage_facet_world import example
from tests.catalog.facets.world import Reads, event

DATASET_FACET = example("dataset-to-dataset")


def derive_it() -> None:
    with override_settings(LINEAGE={**settings.LINEAGE, "EXPERIMENTAL_LINEAGE_FACET": True}):
        derive(event(output_facets={lineage.NAME: DATASET_FACET}))


def native(r: Reads) -> None:
    dataset = r.dataset()
    assert dataset["facets"][lineage.NAME]["fields"] == DATASET_FACET["fields"]  # as sent
    pairs = {(e["source_field"], e["target_field"]) for e in dataset["column_lineage"]}
    assert pairs == {("id", "customer_id")}


def marquez(r: Reads) -> None:
    [entry] = r.mz_dataset()["columnLineage"]
    assert entry["name"] == "customer_id"
    assert [(i["dataset"], i["field"]) for i in entry["inputFields"]] == [
        ("public.customers", "id")
    ]


CASE = (derive_it, native, marquez)

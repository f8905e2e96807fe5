"""Issue 41 item 3 (ADR 0093): a dataset's HierarchyDatasetFacet is its browse path on the
admin's dataset page, redacted; levels of a bad shape are skipped, never an error."""

import pytest

from catalog.facets import hierarchy
from catalog.models import Dataset
from tests.api.project_fixtures import derive
from tests.catalog.facets.world import OUTPUT, event, facet

pytestmark = pytest.mark.django_db


def test_the_admin_shows_the_browse_path_redacted(admin_client):
    levels = [
        {"type": "DATABASE", "name": "warehouse"},
        {"type": "SCHEMA", "name": "sales token=S3CRETh"},
        {"type": "TABLE", "name": "orders"},
    ]
    sent = facet("1-0-0/HierarchyDatasetFacet", hierarchy=levels)
    derive(event(output_facets={hierarchy.NAME: sent}))
    dataset = Dataset.objects.for_alias(*OUTPUT).get()
    page = admin_client.get(f"/admin/catalog/dataset/{dataset.id}/change/").content.decode()
    assert "warehouse / sales token=" in page and "S3CRETh" not in page


def test_levels_of_a_bad_shape_are_skipped():
    facets = {
        hierarchy.NAME: {
            "hierarchy": [{"type": "DATABASE", "name": "db"}, {"type": 1, "name": "x"}, "t", {}]
        }
    }
    assert hierarchy.levels(facets) == [{"type": "DATABASE", "name": "db"}]
    assert hierarchy.path({hierarchy.NAME: {"hierarchy": "db.t"}}) == ""

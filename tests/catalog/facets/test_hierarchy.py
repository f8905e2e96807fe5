"""Issue 41 item 3 (ADR 0093): a dataset's HierarchyDatasetFacet is its browse path on the
admin's dataset page, redacted; levels of a bad shape are skipped, never an error. The
browse filter (/api/v1/datasets?path=, the changelist's column and filter) takes whole
levels, by a range of one partial index, and a bad path is a 400."""

from typing import Any

import pytest
from django.db import connection

from catalog.facets import hierarchy
from catalog.models import Dataset
from tests.api.conftest import results
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


def _in(name: str, *levels: str) -> dict[str, Any]:
    """An event writing ``s3://lake/<name>`` with the hierarchy ``levels``."""
    sent = event(
        output_facets={
            hierarchy.NAME: facet(
                "1-0-0/HierarchyDatasetFacet",
                hierarchy=[{"type": "LEVEL", "name": level} for level in levels],
            )
        }
    )
    sent["outputs"][0]["name"] = name
    sent["run"]["runId"] = f"0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7{len(name):03d}"
    return sent


@pytest.fixture
def tree() -> dict[str, int]:
    derive(
        _in("t1", "db", "sales", "orders"),
        _in("t22", "db", "sales_eu", "orders"),
        _in("t333", "db", "sales", "returns token=S3CRETh"),
        _in("t4444", "other", "x"),
        _in("t55555"),  # no levels: no browse path
    )
    return {n: Dataset.objects.for_alias(OUTPUT[0], n).get().id for n in ("t1", "t22", "t333")}


def _ids(api, path: str) -> set[int]:
    return {row["id"] for row in results(api.get("/api/v1/datasets", {"path": path}))}


def test_the_browse_filter_takes_whole_levels(api, tree):
    assert _ids(api, "db/sales") == {tree["t1"], tree["t333"]}  # not db/sales_eu
    assert _ids(api, "/db/sales/") == {tree["t1"], tree["t333"]}
    assert _ids(api, "db") == set(tree.values())
    assert _ids(api, "db/sales/orders") == {tree["t1"]}
    assert _ids(api, "db/sales_") == _ids(api, "db/%") == set()  # LIKE's wildcards are text
    assert _ids(api, "db/sales/returns token=S3CRETh") == set()  # stored redacted
    assert "S3CRETh" not in str(Dataset.objects.values_list("browse_path", flat=True))


@pytest.mark.parametrize("path", ["/", "//", "x" * (hierarchy.KEY_LIMIT + 1)])
def test_a_browse_path_naming_no_level_or_too_long_is_a_400(api, tree, path):
    response = api.get("/api/v1/datasets", {"path": path})
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "/path"


def test_the_browse_filter_reads_one_page_and_its_aliases(api, tree, django_assert_num_queries):
    api.get("/api/v1/stats")  # the token resolved and cached: the count is the view's
    # 1 the page of datasets under the path, 2 their aliases (one prefetch): as unfiltered
    with django_assert_num_queries(2):
        assert len(results(api.get("/api/v1/datasets", {"path": "db"}))) == 3


def test_the_browse_filter_is_a_range_of_its_partial_index(tree):
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = Dataset.objects.under_path("db/sales").query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        assert "catalog_dataset_browse_idx" in str(cursor.fetchall())


def test_the_changelist_links_each_level_and_filters_by_it(admin_client, tree):
    page = admin_client.get("/admin/catalog/dataset/").content.decode()
    assert '<a href="?path=db%2Fsales">sales</a>' in page
    filtered = admin_client.get("/admin/catalog/dataset/", {"path": "db/sales"}).content.decode()
    assert "t1" in filtered and "t333" in filtered and "t22" not in filtered
    assert "t4444" not in filtered

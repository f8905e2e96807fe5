"""Run facts on the Marquez mount's dataset versions, as Marquez serves them (issue 26 part
7, ADR 0064): Marquez keeps an output's ``outputStatistics`` as a facet of the dataset
version the run wrote, and an input's ``dataQualityMetrics``/``dataQualityAssertions``
(every input facet) as facets of the version current when the run read it; a version's
facets are merged in event order, a later one winning (its ``DatasetVersionDao`` and
``MapperUtils.toFacetsOrNull``). Facet values are the producer's objects, as sent."""

from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.project_fixtures import derive
from tests.catalog.conftest import facet, run_event

pytestmark = pytest.mark.django_db

WAREHOUSE = "postgres://warehouse:5432"
TABLE = "shop.staging.stg_orders"
WRITER = ("dbt://analytics", "shop.stg_orders")
CHECKER = ("airflow", "quality.check_orders")
FIRST, SECOND = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a01", "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a02"
EARLY = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a10"
CHECK_1, CHECK_1B = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a11", "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a12"
CHECK_2 = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a13"
BASE = f"/namespaces/{quote(WAREHOUSE, safe='')}/datasets/{TABLE}/versions"


def _write(run_id, seconds, rows):
    output = {
        "namespace": WAREHOUSE,
        "name": TABLE,
        "facets": {"schema": facet(fields=[{"name": "order_id", "type": "INTEGER"}])},
        "outputFacets": {"outputStatistics": facet(rowCount=rows, size=rows * 40, fileCount=1)},
    }
    return run_event("COMPLETE", seconds, run_id, job=WRITER, outputs=[output])


def _check(run_id, seconds, passed, statistics=None, **metrics):
    read = {
        "namespace": WAREHOUSE,
        "name": TABLE,
        "inputFacets": {
            "dataQualityAssertions": facet(
                assertions=[{"assertion": "not_null", "success": passed, "column": "order_id"}]
            ),
            **({"dataQualityMetrics": facet(**metrics)} if metrics else {}),
            **({"inputStatistics": facet(**statistics)} if statistics else {}),
        },
    }
    return run_event("COMPLETE", seconds, run_id, job=CHECKER, inputs=[read])


@pytest.fixture
def history():
    """Read before any write, written twice, each version checked; derived out of order."""
    derive(
        _check(CHECK_2, 400, True),
        _write(SECOND, 300, 1180),
        _check(EARLY, 50, False, statistics={"rowCount": 7}),
        _write(FIRST, 100, 1000),
        _check(CHECK_1B, 250, False),
        _check(CHECK_1, 200, True, rowCount=1000, columnMetrics={"order_id": {"nullCount": 0}}),
    )


def _versions(mz):
    response = mz.get(BASE)
    assert response.status_code == 200, response.content
    return {version["version"]: version for version in response.json()["versions"]}


def test_a_version_carries_its_writers_output_statistics_as_sent(history, mz):
    versions = _versions(mz)
    assert set(versions) == {FIRST, SECOND}
    statistics = versions[SECOND]["facets"]["outputStatistics"]
    # OutputStatisticsOutputDatasetFacet, key for key as the producer sent it.
    assert statistics == facet(rowCount=1180, size=1180 * 40, fileCount=1)
    assert versions[FIRST]["facets"]["outputStatistics"]["rowCount"] == 1000
    assert "schema" in versions[FIRST]["facets"]  # the event's dataset facets stay


def test_a_readers_quality_facets_are_on_the_version_it_read(history, mz):
    versions = _versions(mz)
    first, second = versions[FIRST]["facets"], versions[SECOND]["facets"]
    # Two checks read the first version: the later one's assertions win, the earlier one's
    # metrics (the later sent none) stay, as Marquez merges a version's facets in order.
    assert first["dataQualityAssertions"]["assertions"] == [
        {"assertion": "not_null", "success": False, "column": "order_id"}
    ]
    assert first["dataQualityMetrics"] == facet(
        rowCount=1000, columnMetrics={"order_id": {"nullCount": 0}}
    )
    assert second["dataQualityAssertions"]["assertions"][0]["success"] is True
    assert "dataQualityMetrics" not in second
    # The check before any write read no version (Marquez would make an empty one): its
    # inputStatistics are on none of the written versions.
    assert not [key for key, version in versions.items() if "inputStatistics" in version["facets"]]


def test_a_failed_write_between_a_version_and_its_reader_makes_no_version(mz):
    """A failed run wrote nothing (ADR 0069): it is no version, and it does not end the
    version before it, so a check after it still reads that version."""
    failed = "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a21"
    attempt = _write(failed, 150, 5)
    attempt["eventType"] = "FAIL"
    derive(_write(FIRST, 100, 1000), attempt, _check(CHECK_1, 200, False))
    versions = _versions(mz)
    assert set(versions) == {FIRST}
    assert versions[FIRST]["facets"]["dataQualityAssertions"]["assertions"][0]["success"] is False


def test_one_version_answers_as_in_the_list(history, mz):
    versions = _versions(mz)
    for version in (FIRST, SECOND):
        response = mz.get(f"{BASE}/{version}")
        assert response.status_code == 200, response.content
        assert response.json()["facets"] == versions[version]["facets"]


def _queries(mz, path):
    with CaptureQueriesContext(connection) as captured:
        assert mz.get(path).status_code == 200
    bookkeeping = ("SAVEPOINT", "RELEASE SAVEPOINT", "SET LOCAL")
    return sum(1 for query in captured if not query["sql"].startswith(bookkeeping))


def test_version_query_counts_are_pinned(history, mz):
    """Alias rules, the dataset, its aliases, the page, the events' facets, the run facts
    (one query, ADR 0064: the only one added), the runs' dataset versions with their io
    facets (one query, ADR 0168), the total; one version the same without the total. The
    list reads its rows in two chunks (one version, then up to paging.MAX_CHUNK more, so
    that a page of large facets is never in memory whole): the rows and the three shaping
    queries twice, 8 + 5. They do not grow with the versions or the readers."""
    mz.get("/tags")  # the token resolved and cached: the counts are the views'
    counts = (_queries(mz, BASE), _queries(mz, f"{BASE}/{FIRST}"))
    derive(
        _write("0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a03", 500, 1200),
        _check("0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a14", 600, True, rowCount=1200),
        _check("0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d9a15", 700, True),
    )
    assert counts == (_queries(mz, BASE), _queries(mz, f"{BASE}/{FIRST}")) == (8 + 5, 7)

"""Every read of a job's newest runs walks catalog_run_job_started_idx in its order (ADR 0160).

The index is ``(job_id, started_at DESC NULLS LAST, id DESC)``, so that a placeholder run (no
start) comes after a job's started runs. An index serves only its own NULL placement: a read
that kept PostgreSQL's ``started_at DESC`` (NULLS FIRST), even one that leaves the NULLs out
with ``started_at IS NOT NULL``, sorted every run of the job to find its newest few (a full
Sort under the LIMIT). Each read below is planned on runs enough to make the difference,
sequential scans and sorts priced out, and each scan of catalog_run may have no full Sort
between it and its LIMIT (an incremental one, for a tie-break the index does not hold, is
what the reads did before).
"""

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.lineage import currency
from catalog.models import RUNS_BY_START, Job, Run
from catalog.reads import marquez_graph, run_facts
from catalog.reads.runs import job_runs
from tests.api.factories import make_job

pytestmark = pytest.mark.django_db

RUNS = 300  # a job's runs, one in ten a placeholder


@pytest.fixture
def job_id() -> int:
    job = make_job("load")
    with connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,
                state_version, started_at, error_message, is_streaming, facets,
                facet_versions, job_version, updated_at, shares_run_id, tags)
               SELECT md5(i::text)::uuid, md5(i::text), %(job)s, i %% 10 = 0,
                      CASE WHEN i %% 10 = 0 THEN 'UNKNOWN' ELSE 'COMPLETE' END, '[]',
                      CASE WHEN i %% 10 = 0 THEN NULL
                           ELSE now() - (i || ' minutes')::interval END,
                      '', false, '{}', '{}', '[]', now(), false, '[]'
               FROM generate_series(1, %(runs)s) AS i""",
            {"job": job.id, "runs": RUNS},
        )
        cursor.execute("ANALYZE catalog_run")
    return job.id


def _plan(sql: str, params: Any) -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    return plan[0]["Plan"]


def _run_scans(node: dict[str, Any], above: list[str]) -> list[tuple[str, list[str]]]:
    """Each scan of catalog_run: its index and the node types above it up to its LIMIT."""
    if node["Node Type"] == "Limit":
        above = []
    found = []
    if node.get("Relation Name") == "catalog_run":
        found.append((node.get("Index Name", ""), above))
    for child in node.get("Plans", []):
        found += _run_scans(child, [*above, node["Node Type"]])
    return found


def _assert_read_in_index_order(sql: str, params: Any) -> None:
    # Runs read back by id, once the job's newest are chosen, are no walk of the job's runs.
    scans = [scan for scan in _run_scans(_plan(sql, params), []) if scan[0] != "catalog_run_pkey"]
    assert scans, "no scan of catalog_run's runs of a job"
    for index, above in scans:
        assert index == "catalog_run_job_started_idx", scans
        assert "Sort" not in above, scans


def _statements_of(read: Any) -> list[str]:
    """The statements ``read()`` ran that order runs by start, as sent (values inlined)."""
    with CaptureQueriesContext(connection) as captured:
        read()
    return [query["sql"] for query in captured.captured_queries if "started_at" in query["sql"]]


def test_a_jobs_runs_by_start_for_the_marquez_mount(job_id) -> None:
    """catalog.reads.runs.job_runs: Marquez's run list, offset pages of started runs."""
    job = Job.objects.get(id=job_id)
    (page,) = [sql for sql in _statements_of(lambda: job_runs(job, 100, 50)) if "ORDER" in sql]
    _assert_read_in_index_order(page, None)


def test_the_latest_test_results_window(job_id) -> None:
    """catalog.reads.run_facts.latest_tests: the newest of a job's latest runs with tests."""
    (statement,) = _statements_of(lambda: run_facts.latest_tests(job_id))
    _assert_read_in_index_order(statement, None)


def test_the_marquez_graphs_latest_runs(job_id) -> None:
    """catalog.reads.marquez_graph.job_facts: each drawn job's newest started runs."""
    read = marquez_graph.job_facts_read([job_id], 10, 100)
    assert read is not None
    _assert_read_in_index_order(*read)


@pytest.mark.parametrize("as_of", [False, True])
def test_the_reference_runs_of_currency(job_id, as_of) -> None:
    """catalog.lineage.currency: a job's newest started run that wrote, else its newest."""
    moment = Run.objects.filter(job_id=job_id).order_by(*RUNS_BY_START)[20].started_at
    sql, values = currency.reference_runs({job_id}, moment if as_of else None)
    _assert_read_in_index_order(sql + " SELECT * FROM reference", values)

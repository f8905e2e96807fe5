"""The depth bound's probes (catalog.lineage.depth_probe.has_more_sides) send the drawn jobs as a
value the planner does not look into (ADR 0114): planned against the array itself, the
``<> ALL`` was estimated element by element against the job column's statistics, most of
the statement's CPU. The answer is the same: tests/api/test_graph.py's depth cuts."""

import pytest
from django.db import connection

from tests.api.factories import make_dataset, make_edge, make_job

pytestmark = pytest.mark.django_db


def test_the_drawn_jobs_are_an_initplan_and_the_cut_is_found(api):
    a, b, c = make_dataset(), make_dataset(), make_dataset()
    make_edge(a, b, make_job())
    make_edge(b, c, make_job())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_job_edge")
    probes: list[tuple[str, dict]] = []

    def capture(execute, sql, params, many, context):
        if "LIMIT 1) IS NOT NULL" in sql:
            probes.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(capture):
        body = api.get(
            f"/api/v1/lineage/graph?node=dataset:{a.id}&direction=downstream&depth=1"
        ).json()
    assert body["cut"]["depth"]["nodes_with_more"] == [f"dataset:{b.id}"]
    [(sql, params)] = probes
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (VERBOSE) " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "InitPlan" in plan
    # The jobs' ids are not a constant of the job probe's filter.
    job_filter = [line for line in plan.splitlines() if "job_id" in line and "ALL" in line]
    assert job_filter and all("'{" not in line for line in job_filter), plan

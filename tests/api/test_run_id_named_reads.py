"""``/runs/{runId}`` without ``job_id`` reads only the runs of a text runId it shows
(ADR 0202).

``Run.objects.named`` gives a text runId's first 20 runs by id. Compared with both the md5
and the text inside its LIMIT, PostgreSQL multiplied their selectivities, expected a
handful of rows and read all of the text's runs by a bitmap to sort them: 1,000 for an
Airflow runId 1,000 DAGs sent (ADR 0196's "left out"). The md5 now decides the range alone,
read along catalog_run_text_idx in its order; the text is compared on the 20 rows it gave,
and only another text with the same md5 among them makes it read again with both.
"""

from typing import Any

import pytest
from django.db import connection

from catalog.models import Run
from catalog.models.jobs_runs import _FIRST_NAMED

pytestmark = pytest.mark.django_db

TEXT = "scheduled__2026-01-01"
SHARERS = 1000

_JOBS = """
INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
    processing_type, job_type, integration, description, lineage_edges_cut, updated_at, tags,
    owners)
SELECT 'tests', 'dag' || i, sha256(convert_to('tests.dag' || i, 'UTF8')), false, '{}', '{}',
    '', '', '', '', false, now(), '[]', '[]'
FROM generate_series(1, %s) AS i
"""
# One run of each job: ``TEXT`` (its sharers), then 100 runs of other runIds each. A text
# one run in 100 keeps, as in a store: with both conditions inside the LIMIT PostgreSQL
# expected 10 rows (1,000 x 1/101), and read the 1,000 by a bitmap.
_RUNS = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    error_message, is_streaming, facets, facet_versions, job_version, updated_at,
    shares_run_id, tags)
SELECT gen_random_uuid(), t, j.id, false, 'COMPLETE', '[]', '', false, '{}', '{}', '[]',
    now(), t = %s, '[]'
FROM (SELECT id FROM catalog_job ORDER BY id) AS j,
    LATERAL (SELECT %s AS t UNION ALL SELECT 'other-' || j.id || '-' || k
             FROM generate_series(1, 100) AS k) AS texts
"""


@pytest.fixture
def sharers() -> list[int]:
    """``SHARERS`` jobs sent ``TEXT``; their runs' ids, in id order."""
    with connection.cursor() as cursor:
        cursor.execute(_JOBS, [SHARERS])
        cursor.execute(_RUNS, [TEXT, TEXT])
        cursor.execute("ANALYZE catalog_run")
        cursor.execute("ANALYZE catalog_job")
    return list(Run.objects.filter(run_id_text=TEXT).order_by("id").values_list("id", flat=True))


def _plan_reads(sql: str, params: Any) -> dict[str, int]:
    """The rows each scan of catalog_run read (kept or filtered out, times its loops), by
    index, or ``catalog_run`` for a bitmap heap scan. Sequential scans priced out: a test's
    table is small enough for one, a store's is not; bitmap scans are what this is about."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
    read: dict[str, int] = {}

    def walk(node: dict[str, Any]) -> None:
        if node.get("Relation Name") == "catalog_run":
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            scan = node.get("Index Name", "catalog_run")
            read[scan] = read.get(scan, 0) + int(rows * node.get("Actual Loops", 1))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    return {scan: rows for scan, rows in read.items() if rows}


def test_named_reads_the_first_20_entries_of_the_text_and_no_more(sharers) -> None:
    named = Run.objects.named(TEXT).values("id")
    assert sorted(row["id"] for row in named) == sharers[:20]
    sql, params = named.query.sql_with_params()
    assert _plan_reads(sql, params) == {"catalog_run_text_idx": 20, "catalog_run_pkey": 20}


def test_the_detail_shows_the_first_runs_and_its_statements_are_pinned(
    api, sharers, django_assert_num_queries
) -> None:
    """The run shown and its ``same_run_id_runs`` are among the first 20 by id, as before;
    the detail's five statements (tests/api/test_catalog.py)."""
    with django_assert_num_queries(5):
        path = f"/api/v1/runs/{TEXT}"
        body = api.get(path, RAW_URI=path).json()
    first = Run.objects.filter(id__in=sharers[:20]).values_list("job_id", flat=True)
    others = {run["job"]["id"] for run in body["same_run_id_runs"]}
    assert {body["job"]["id"], *others} == set(first)
    assert (len(others), body["shares_run_id"]) == (19, True)


UUID = "0b1f3c1e-6a8e-4c7b-9d7e-2f1a3b4c5d6e"


def test_an_events_sharers_of_a_uuid_many_jobs_sent_are_read_in_key_order_and_no_further() -> None:
    """``/events/{id}``'s ``run_id_shared_with`` (``Run.objects.shared_with``): a UUID runId
    ``SHARERS`` jobs sent is read along its key's index in job order, 20 runs and the job
    left out; sorted by job name it read all 1,000 runs and joined every job."""
    with connection.cursor() as cursor:
        cursor.execute(_JOBS, [SHARERS])
        cursor.execute(
            "INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,"
            " state_version, error_message, is_streaming, facets, facet_versions, job_version,"
            " updated_at, shares_run_id, tags)"
            " SELECT %s::uuid, %s, id, false, 'COMPLETE', '[]', '', false, '{}', '{}', '[]',"
            " now(), true, '[]' FROM catalog_job",
            [UUID, UUID],
        )
        cursor.execute("ANALYZE catalog_run")
        cursor.execute("ANALYZE catalog_job")
    jobs = _job_ids()
    shared = Run.objects.shared_with(UUID, "tests", "dag1", 20)
    assert [run.job_id for run in shared] == jobs[1:21]
    sql, params = shared.query.sql_with_params()
    assert sum(_plan_reads(sql, params).values()) <= 25


def test_another_text_of_the_same_hash_among_the_first_is_read_past() -> None:
    """A text whose md5 another text has (none is known to occur): the first read's rows are
    not all the text's, so the second read compares the text inside its LIMIT. Shown with a
    hash that collides at will (the length): the SQL's logic, not the index."""
    weak = _FIRST_NAMED.replace("md5(run_id_text)", "length(run_id_text)::text").replace(
        "md5(%s)", "length(%s)::text"
    )
    with connection.cursor() as cursor:
        cursor.execute(_JOBS, [4])
        cursor.execute(
            "INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state,"
            " state_version, error_message, is_streaming, facets, facet_versions, job_version,"
            " updated_at, shares_run_id, tags)"
            " SELECT gen_random_uuid(), t, j, false, 'COMPLETE', '[]', '', false, '{}', '{}',"
            " '[]', now(), false, '[]' FROM unnest(%s::text[], %s::bigint[]) AS r(t, j)",
            [["aaaa", "bbbb", "aaaa", "aaaa"], list(_job_ids())],
        )
        ids = dict(Run.objects.values_list("job__name", "id"))
        for text, limit, expected in [
            ("aaaa", 2, [ids["dag1"], ids["dag3"]]),  # "bbbb" among the first two
            ("bbbb", 2, [ids["dag2"]]),
            ("aaaa", 1, [ids["dag1"]]),  # only "aaaa" among the first one
        ]:
            cursor.execute(weak, [text, text, limit, text, text, limit])
            assert sorted(row[0] for row in cursor.fetchall()) == expected, (text, limit)


def _job_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM catalog_job ORDER BY id")
        return [row[0] for row in cursor.fetchall()]

"""The admin's lists ordered by a nullable time put a row with no time where the earliest time
would be: after every timed row newest first, before them oldest first (ADR 0160).

PostgreSQL sorts NULL first in DESC: a job's run list opened on placeholder runs (no start,
known only from a child's parent facet) above its newest real runs, and the job and dataset
lists on the never-seen ones. Each order pages through once, across the NULL boundary and
the ties on each side of it, and is served by an index in its order, with no sort.
"""

import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import Job, Run
from tests.api.factories import T0, make_dataset, make_job, make_run

pytestmark = pytest.mark.django_db

REAL_RUNS = 45  # started at four moments, so each ties with ten others
PLACEHOLDERS = 30  # the rest of the 50-row first page and all of the second


def _ids(client: Client, url: str, model: str) -> list[int]:
    """The ids of the rows a change list page shows, in order."""
    response = client.get(url)
    assert response.status_code == 200, response.content[:500]
    table = response.content.decode().split('id="result_list"', 1)[1].split("</table>", 1)[0]
    found = re.findall(rf"/admin/catalog/{model}/(\d+)/change/", table)
    return list(dict.fromkeys(int(found_id) for found_id in found))


@pytest.fixture
def job_runs() -> tuple[Job, list[int]]:
    """A job's real runs and placeholders created interleaved (ids in no time order), and
    their order: newest start first, ties by the higher id, placeholders after by id."""
    job = make_job("dag")
    real: list[Run] = []
    placeholders: list[Run] = []
    for index in range(REAL_RUNS + PLACEHOLDERS):
        if (index % 5 in (1, 3) and len(placeholders) < PLACEHOLDERS) or len(real) == REAL_RUNS:
            run_uuid = uuid.uuid4()
            placeholders.append(
                Run.objects.create(run_uuid=run_uuid, run_id_text=str(run_uuid), job=job)
            )
        else:
            real.append(make_run(job, started=T0 + timedelta(hours=len(real) % 4)))
    order = sorted(real, key=lambda run: (run.started_at, run.id), reverse=True)
    order += sorted(placeholders, key=lambda run: run.id, reverse=True)
    return job, [run.id for run in order]


def test_a_jobs_runs_page_through_placeholders_last(admin_client, job_runs) -> None:
    job, expected = job_runs
    first = _ids(admin_client, f"/admin/catalog/run/?job={job.id}", "run")
    second = _ids(admin_client, f"/admin/catalog/run/?job={job.id}&p=2", "run")
    # Page one: every real run, newest first, before any placeholder.
    assert first[:REAL_RUNS] == expected[:REAL_RUNS]
    assert first + second == expected


def test_a_jobs_page_lists_its_newest_runs_before_its_placeholders(admin_client, job_runs):
    job, expected = job_runs
    response = admin_client.get(f"/admin/catalog/job/{job.id}/change/")
    assert response.status_code == 200
    page = response.content.decode()
    table = re.split("latest runs", page, maxsplit=1, flags=re.IGNORECASE)[1]
    shown = [int(found) for found in re.findall(r"/admin/catalog/run/(\d+)/change/", table)]
    assert shown[:10] == expected[:10]


def _newest_seen_first(rows: list) -> list[int]:
    """Ids newest ``last_seen`` first, ties by the higher id, the never-seen after by id."""
    seen = sorted((row for row in rows if row.last_seen), key=lambda row: (row.last_seen, row.id))
    never = sorted((row.id for row in rows if row.last_seen is None), reverse=True)
    return [row.id for row in reversed(seen)] + never


@pytest.mark.parametrize("model", ["job", "dataset"])
def test_never_seen_rows_are_the_earliest_both_ways(admin_client, model) -> None:
    make = make_job if model == "job" else make_dataset
    rows = []
    for index in range(12):
        if index % 3 == 0:
            rows.append(make(first_seen=None, last_seen=None))
        else:
            rows.append(make(last_seen=T0 + timedelta(hours=index % 2)))
    expected = _newest_seen_first(rows)
    newest = _ids(admin_client, f"/admin/catalog/{model}/", model)
    assert newest == expected
    # The header's two clicks on "last seen": the same order, and exactly its reverse (the
    # id that breaks ties runs the way the time does).
    column = _last_seen_column(admin_client, model)
    assert _ids(admin_client, f"/admin/catalog/{model}/?o=-{column}", model) == expected
    assert _ids(admin_client, f"/admin/catalog/{model}/?o={column}", model) == expected[::-1]


def _last_seen_column(client: Client, model: str) -> str:
    """The ``o`` index of the "last seen" column (its place after the action checkbox)."""
    page = client.get(f"/admin/catalog/{model}/").content.decode()
    header = page.split("column-last_seen", 1)[1].split("</th>", 1)[0]
    return re.findall(r"\?o=-?(\d+)", header)[0]


@pytest.mark.parametrize(
    ("url", "column", "index"),
    [
        ("/admin/catalog/run/?job={job}", "catalog_run.started_at", "catalog_run_job_started_idx"),
        (
            "/admin/catalog/run/?state__exact=UNKNOWN",
            "catalog_run.started_at",
            "catalog_run_state_idx",
        ),
        ("/admin/catalog/job/", "catalog_job.last_seen", "catalog_job_update_idx"),
        ("/admin/catalog/dataset/", "catalog_dataset.last_seen", "catalog_dataset_seen_idx"),
    ],
)
def test_each_order_is_read_from_its_index(admin_client, job_runs, url, column, index) -> None:
    """The page's statement (a LIMIT when the list has more than a page, none when one page
    holds it) reads the index in its order: no Sort but an incremental one, for the state
    index, which ends in the start and leaves the id's ties."""
    job, _ = job_runs
    with CaptureQueriesContext(connection) as captured:
        admin_client.get(url.format(job=job.id))
    (page,) = [
        query["sql"]
        for query in captured.captured_queries
        if "ORDER BY {}".format('"."'.join(column.split(".")).join('""')) in query["sql"]
    ]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + page)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert index in plan, plan
    assert not re.search(r"(?<!Incremental )Sort  \(cost", plan), plan

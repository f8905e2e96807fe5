"""A run's detail reads what it shows of a run's inputs and outputs, however many the run has
(ADR 0168).

The REST detail (``/api/v1/runs/{runId}``) shows the first 200 inputs and the first 200
outputs by id (docs/api.md) and the run facts of those; the Marquez mount's run
(``jobs/runs/{runId}``) at most 200 input and 200 output versions. Both read them on
catalog_run_ds_run_idx ``(run, direction, id)`` and stop there: before, the REST detail
numbered every row of the run in a window and read every run fact of it, and the Marquez
read joined and sorted every link of the run, then cut one slice of both directions (a
run of 200 inputs or more showed no output at all). The wide run is built with SQL: more
links than the detail shows of each direction, each with a run fact.
"""

from typing import Any
from urllib.parse import quote
from uuid import uuid4

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import RUN_LINKS_COUNTED, RUN_LINKS_SHOWN, RunDataset
from catalog.names import naming
from tests.api.conftest import follow_all, results
from tests.api.factories import T0, make_dataset, make_event, make_job, make_run
from tests.marquez.conftest import MarquezClient
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

INPUTS = 3 * RUN_LINKS_SHOWN
OUTPUTS = RUN_LINKS_SHOWN + 50
OTHER_RUNS = 20

# Per i in 1..inputs+outputs: a dataset, its alias, the run's link to it (inputs first, so
# link ids follow i) and one run fact about it.
_LINKS = """
WITH n AS (
    SELECT i, CASE WHEN i <= %(inputs)s THEN 'input' ELSE 'output' END AS direction
    FROM generate_series(1, %(inputs)s + %(outputs)s) AS i
), d AS (
    INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, owners,
        tags, browse_path)
    SELECT 'postgres://wide:5432', %(prefix)s || lpad(i::text, 5, '0'), '{}', '{}', '',
        'active', false, now(), now(), now(), 0, '[]', '[]', ''
    FROM n ORDER BY i DESC
    RETURNING id, name
), a AS (
    INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
        reason_version, first_seen, last_seen, dataset_id, is_table_name)
    SELECT 'postgres://wide:5432', d.name, sha256(convert_to(d.name, 'UTF8')), 'event', '',
        '[]', now(), now(), d.id, false
    FROM d
    RETURNING id, name
), l AS (
    INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen, last_seen, via,
        confirmed)
    SELECT %(run)s, a.id, n.direction, now(), now(), '', false
    FROM a JOIN n ON a.name = %(prefix)s || lpad(n.i::text, 5, '0')
    ORDER BY n.i
    RETURNING alias_id, direction
)
INSERT INTO catalog_run_dataset_facet (run_id, alias_id, direction, name, version, value)
SELECT %(run)s, l.alias_id, l.direction, l.direction || 'Statistics', '1',
    jsonb_build_object('rowCount', 7, 'size', 1024)
FROM l
"""


def _name(prefix: str, i: int) -> str:
    return f"{prefix}{i:05d}"


@pytest.fixture
def runs() -> dict[str, Any]:
    """A completed run of INPUTS inputs and OUTPUTS outputs, and a failed one of as many:
    datasets made in reverse order, so that dataset ids run against link ids; and
    OTHER_RUNS runs of the completed run's datasets."""
    job = make_job("wide")
    made = {"complete": make_run(job), "failed": make_run(job, state="FAIL")}
    with connection.cursor() as cursor:
        for label, run in made.items():
            cursor.execute(
                _LINKS,
                {"run": run.id, "inputs": INPUTS, "outputs": OUTPUTS, "prefix": f"{label}.t"},
            )
        # Other runs of the same datasets, as a store holds many runs: the link table is no
        # longer two runs' rows, in order of id.
        others = [make_run(job).id for _ in range(OTHER_RUNS)]
        cursor.execute(
            """INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen,
                   last_seen, via, confirmed)
               SELECT o.id, w.alias_id, w.direction, w.first_seen, w.last_seen, '', false
               FROM unnest(%s::bigint[]) AS o(id), catalog_run_dataset w WHERE w.run_id = %s""",
            [others, made["complete"].id],
        )
        cursor.execute("ANALYZE catalog_run_dataset")
        cursor.execute("ANALYZE catalog_run_dataset_facet")
    return made


def _first(prefix: str, direction: str) -> list[str]:
    """The names of the first RUN_LINKS_SHOWN links of a direction, by link id."""
    first = 1 if direction == "input" else INPUTS + 1
    return [_name(prefix, i) for i in range(first, first + RUN_LINKS_SHOWN)]


def test_the_rest_detail_shows_the_first_of_each_direction_and_their_facts(api, runs) -> None:
    run = runs["complete"]
    body = api.get(f"/api/v1/runs/{run.run_uuid}").json()
    for direction in ("input", "output"):
        shown = [link["dataset"]["name"] for link in body[f"{direction}s"]]
        assert shown == _first("complete.t", direction)
        # The facts of the inputs and outputs shown, and of no other (before: the first 200
        # entries by direction and alias, all of them inputs; none about an output).
        facts = [e for e in body["dataset_facts"] if e["direction"] == direction]
        assert sorted(e["dataset"]["name"] for e in facts) == sorted(shown)
        assert {e["statistics"]["row_count"] for e in facts} == {7}


def test_the_marquez_run_shows_outputs_of_a_run_of_many_inputs(api, runs) -> None:
    mz = MarquezClient(api)
    run = runs["complete"]
    body = mz.get(f"/jobs/runs/{run.run_uuid}").json()
    for direction in ("input", "output"):
        versions = body[f"{direction}DatasetVersions"]
        # By dataset id, as before: the datasets were made last link first.
        names = [version["datasetVersionId"]["name"] for version in versions]
        assert names == sorted(_first("complete.t", direction), reverse=True)
        assert {
            version["facets"][f"{direction}Statistics"]["rowCount"] for version in versions
        } == {7}
    failed = mz.get(f"/jobs/runs/{runs['failed'].run_uuid}").json()
    assert len(failed["inputDatasetVersions"]) == RUN_LINKS_SHOWN
    assert failed["outputDatasetVersions"] == []  # attempted only: no version (ADR 0069)


RUNS = "/marquez/api/v1/jobs/runs/"
FACT_INDEXES = ("catalog_run_ds_facet_uniq", "catalog_run_ds_facet_alias_idx")


@pytest.mark.parametrize(
    ("read", "label", "shown"),
    [
        ("/api/v1/runs/", "complete", 2 * RUN_LINKS_SHOWN),
        ("/api/v1/runs/", "failed", 2 * RUN_LINKS_SHOWN),  # attempted outputs are shown
        (RUNS, "complete", 2 * RUN_LINKS_SHOWN),
        (RUNS, "failed", RUN_LINKS_SHOWN),  # its outputs are no writes: none read
    ],
)
def test_the_reads_stop_after_what_they_show(api, runs, read, label, shown) -> None:
    """Each statement that reads a run's links reads at most RUN_LINKS_SHOWN of each direction
    on catalog_run_ds_run_idx (the REST detail reads those rows again by id), and the facts
    of those (one row each here), however many the run has."""
    path = f"{read}{runs[label].run_uuid}"
    with CaptureQueriesContext(connection) as captured:
        assert api.get(path, RAW_URI=path).status_code == 200
    # Those that read links to show them; counting them (the detail's run statement) stops
    # at RUN_LINKS_COUNTED: test_the_counts_stop_past_their_bound.
    statements = [
        q["sql"]
        for q in captured.captured_queries
        if "catalog_run_dataset" in q["sql"] and "AS counted" not in q["sql"]
    ]
    assert statements
    for sql in statements:
        scans = rows_read(sql, "catalog_run_dataset")
        assert 0 < scans.pop("catalog_run_ds_run_idx") <= shown, (scans, sql)
        assert scans.pop("catalog_run_dataset_pkey", 0) <= shown, (scans, sql)
        # The facts of a link: one probe by (run, alias) or (alias, run), one row each here.
        facts = sum(scans.pop(name, 0) for name in FACT_INDEXES)
        assert facts <= shown, (scans, sql)
        assert not scans, (scans, sql)  # no other scan of them


# The counts and the lists of them all (ADR 0186): the detail says how many inputs and
# outputs the run has, counted up to RUN_LINKS_COUNTED, and links /runs/{runId}/inputs and
# /outputs, cursor lists by link id whose first items are what the detail shows.


def _names(items: list[dict[str, Any]]) -> list[str]:
    return [item["dataset"]["name"] for item in items]


def test_the_detail_counts_each_direction_and_links_the_lists(api, runs) -> None:
    run = runs["complete"]
    body = api.get(f"/api/v1/runs/{run.run_uuid}").json()
    assert (body["input_count"], body["output_count"]) == (INPUTS, OUTPUTS)
    assert body["input_count_is_lower_bound"] is body["output_count_is_lower_bound"] is False
    # By the run's UUID and job: the one run, whatever runId it was sent as (ADR 0028).
    base = f"http://testserver/api/v1/runs/{run.run_uuid}"
    assert body["inputs_url"] == f"{base}/inputs?job_id={run.job_id}"
    assert body["outputs_url"] == f"{base}/outputs?job_id={run.job_id}"


@pytest.mark.parametrize("label", ["complete", "failed"])
def test_the_lists_page_through_every_link_by_id(api, runs, label) -> None:
    detail = api.get(f"/api/v1/runs/{runs[label].run_uuid}").json()
    for direction, first, count in (("input", 1, INPUTS), ("output", INPUTS + 1, OUTPUTS)):
        items = follow_all(api, f"{detail[f'{direction}s_url']}&limit=300")
        assert _names(items) == [_name(f"{label}.t", i) for i in range(first, first + count)]
        # The detail shows the list's first items, in the same shape.
        assert items[:RUN_LINKS_SHOWN] == detail[f"{direction}s"]
        assert {item["attempted"] for item in items} == {label == "failed"}  # ADR 0069


def _second_page(api, run, direction: str, limit: int) -> str:
    first = api.get(f"/api/v1/runs/{run.run_uuid}/{direction}s?limit={limit}").json()
    assert len(first["results"]) == limit and first["next"], first
    return first["next"]


def test_a_page_of_links_queries(api, runs, django_assert_num_queries) -> None:
    run = runs["complete"]
    deep = _second_page(api, run, "input", 250)
    # 1 the run (what `attempted` needs of it), 2 the page with its aliases and datasets
    for path, size in ((f"/api/v1/runs/{run.run_uuid}/outputs", 50), (deep, 250)):
        with django_assert_num_queries(2):
            assert len(api.get(path).json()["results"]) == size


def test_a_deep_page_reads_its_own_links_only(api, runs) -> None:
    """The second page of 250 inputs reads 251 entries of catalog_run_ds_run_idx (one more:
    whether there is a next page) and each one's alias and dataset, not the 250 before it."""
    deep = _second_page(api, runs["complete"], "input", 250)
    with CaptureQueriesContext(connection) as captured:
        assert _names(api.get(deep).json()["results"])[0] == _name("complete.t", 251)
    statements = [q["sql"] for q in captured.captured_queries if "catalog_run_dataset" in q["sql"]]
    assert len(statements) == 1
    assert rows_read(statements[0], "catalog_run_dataset") == {"catalog_run_ds_run_idx": 251}


def test_the_lists_find_the_run_as_its_detail_does(api, runs) -> None:
    run = runs["complete"]
    for direction in ("inputs", "outputs"):
        path = f"/api/v1/runs/{run.run_uuid}/{direction}"
        assert api.get(f"{path}?job_id={run.job_id}").status_code == 200
        for missing in (
            f"{path}?job_id={run.job_id + 1000}",
            f"/api/v1/runs/{uuid4()}/{direction}",
        ):
            response = api.get(missing)
            assert response.status_code == 404, missing
            assert response["Content-Type"] == "application/problem+json"
        assert api.get(f"{path}?job_id=x").status_code == 404  # as the detail: no such job
        assert api.get(f"{path}?limit=501").status_code == 400
        assert api.get(f"{path}?cursor=garbled").json()["type"].endswith(":invalid-cursor")
        # A runId redaction would change is refused, found or not (docs/api.md).
        assert api.get(f"/api/v1/runs/password=hunter2/{direction}").status_code == 400


@pytest.mark.parametrize("text", ["manual__2026-10-01T09:00:00.123+00:00", "nightly/orders/17"])
def test_a_run_id_with_dots_is_addressed_like_any_other(api, text) -> None:
    """A runId that is no UUID and holds dots (Airflow's ``dag.task.2024-01-01``, a manual
    run's ``manual__2026-10-01T09:00:00.123+00:00``) or slashes: DRF's default ``[^/.]+``
    left its detail unroutable, a 404, and ``<str:>`` its links' lists (ADR 0190)."""
    job = make_job("dotted", namespace="tests")
    run = make_run(job, run_uuid=naming.job_run_uuid(text, "tests", "dotted"), run_id_text=text)
    make_event(run_id=text, job_namespace="tests", job_name="dotted")
    dataset = make_dataset("shop.public.dotted")
    RunDataset.objects.create(
        run=run, alias=dataset.aliases.get(), direction="input", first_seen=T0, last_seen=T0
    )
    quoted = quote(text, safe="")  # "+" is a space in a query, not in a path; "/" is "%2F"
    body = api.get(f"/api/v1/runs/{quoted}").json()
    assert (body["run_id"], body["input_count"]) == (str(run.run_uuid), 1)
    lists = [f"/api/v1/runs/{quoted}/inputs", f"/api/v1/runs/{quoted}/outputs"]
    if "/" in text:  # no path segment: the lists are at the run's UUID, as the detail says
        lists = [body["inputs_url"], body["outputs_url"]]
        assert f"/api/v1/runs/{run.run_uuid}/inputs?job_id=" in lists[0]
    assert _names(results(api.get(lists[0]))) == ["shop.public.dotted"]
    assert results(api.get(lists[1])) == []


# A run of RUN_LINKS_COUNTED + 5 inputs, all aliases of one dataset, and one output.
_CROWDED = """
WITH a AS (
    INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
        reason_version, first_seen, last_seen, dataset_id, is_table_name)
    SELECT 'hive://meta:9083', 'part_' || g, sha256(convert_to('part_' || g, 'UTF8')),
        'symlink', '', '[]', now(), now(), %(dataset)s, false
    FROM generate_series(1, %(inputs)s) g
    RETURNING id
)
INSERT INTO catalog_run_dataset (run_id, alias_id, direction, first_seen, last_seen, via,
    confirmed)
SELECT %(run)s, a.id, 'input', now(), now(), '', false FROM a
UNION ALL
SELECT %(run)s, %(output)s, 'output', now(), now(), '', false
"""


def test_the_counts_stop_past_their_bound(api, runs) -> None:
    """Counting is a range of the index that stops one row past RUN_LINKS_COUNTED: a run of
    more says so (``_is_lower_bound``) and costs no more to count."""
    run = make_run(make_job("crowded"))
    dataset, written = make_dataset("warehouse.parts"), make_dataset("warehouse.summary")
    with connection.cursor() as cursor:
        cursor.execute(
            _CROWDED,
            {
                "run": run.id,
                "dataset": dataset.id,
                "inputs": RUN_LINKS_COUNTED + 5,
                "output": written.aliases.get().id,
            },
        )
        cursor.execute("ANALYZE catalog_run_dataset")
    path = f"/api/v1/runs/{run.run_uuid}"
    with CaptureQueriesContext(connection) as captured:
        body = api.get(path, RAW_URI=path).json()
    assert (body["input_count"], body["input_count_is_lower_bound"]) == (RUN_LINKS_COUNTED, True)
    assert (body["output_count"], body["output_count_is_lower_bound"]) == (1, False)
    (counting,) = [q["sql"] for q in captured.captured_queries if "AS counted" in q["sql"]]
    assert rows_read(counting, "catalog_run_dataset") == {
        "catalog_run_ds_run_idx": RUN_LINKS_COUNTED + 1 + 1
    }

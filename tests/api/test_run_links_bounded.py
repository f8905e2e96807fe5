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

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models.jobs_runs import RUN_LINKS_SHOWN
from tests.api.factories import make_job, make_run
from tests.marquez.conftest import MarquezClient

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


def _rows_read(sql: str) -> dict[str, int]:
    """The rows ``sql``'s scans of a run's links and facts read (kept or filtered out), per
    index (a sequential scan: its table), by ``EXPLAIN ANALYZE``, with sequential and bitmap
    scans priced out as the other plan tests do."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0][0]["Plan"]
    read: dict[str, int] = {}

    def walk(node: dict[str, Any]) -> None:
        table = node.get("Relation Name", "")
        if table.startswith("catalog_run_dataset"):
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            scan = node.get("Index Name", table)
            read[scan] = read.get(scan, 0) + int(rows * node.get("Actual Loops", 1))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    return read


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
    statements = [q["sql"] for q in captured.captured_queries if "catalog_run_dataset" in q["sql"]]
    assert statements
    for sql in statements:
        scans = _rows_read(sql)
        assert 0 < scans.pop("catalog_run_ds_run_idx") <= shown, (scans, sql)
        assert scans.pop("catalog_run_dataset_pkey", 0) <= shown, (scans, sql)
        # The facts of a link: one probe by (run, alias) or (alias, run), one row each here.
        facts = sum(scans.pop(name, 0) for name in FACT_INDEXES)
        assert facts <= shown, (scans, sql)
        assert not scans, (scans, sql)  # no other scan of them

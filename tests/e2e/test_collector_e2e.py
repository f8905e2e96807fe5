"""End to end: a pipeline instrumented by lineage-collector, against a live Lineage Catalog.

SQLAlchemy runs on a real PostgreSQL database made for the test, S3 on moto and Athena on
botocore's Stubber (all offline); the collector posts to ``live_server`` with an ingest
token, and the test checks the raw log and then what derivation makes of it.
"""

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path

import lineage_collector as lc
import pytest
from lineage_collector.errors import counters

from catalog.models import Dataset, Job, LineageEdge, Run
from catalog.services.derive import derive_events
from ingest.models import Event
from ingest.services import create_token

sa = pytest.importorskip("sqlalchemy")
psycopg = pytest.importorskip("psycopg")
boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
from botocore.stub import Stubber  # noqa: E402

PG = "postgres://127.0.0.1:5432"
ATHENA = "awsathena://athena.eu-west-1.amazonaws.com"


@pytest.fixture
def pipeline_database():
    """A PostgreSQL database for the pipeline itself (not the catalog's)."""
    name = f"lc_e2e_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    engine = sa.create_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
    yield engine
    engine.dispose()
    admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    admin.close()


@pytest.fixture
def collector(live_server, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    _, secret = create_token("collector e2e", "ingest")
    lc.install(url=live_server.url, api_key=secret, namespace="shop", flush_interval=0.01)
    yield secret
    lc.uninstall()


def athena_execution(query_id: str, query: str) -> dict:
    return {
        "QueryExecution": {
            "QueryExecutionId": query_id,
            "Query": query,
            "QueryExecutionContext": {"Database": "sales", "Catalog": "AwsDataCatalog"},
            "Status": {"State": "SUCCEEDED"},
        }
    }


def run_pipeline(engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE orders (id int, day date, total int)")
        connection.exec_driver_sql("CREATE TABLE orders_raw (id int, day date, total int)")

    @lc.job("load-orders", flow="shop-etl")
    def load_orders() -> None:
        with engine.begin() as connection:
            connection.execute(
                sa.text("INSERT INTO orders_raw VALUES (:id, :day, :total)"),
                [
                    {"id": 1, "day": "2026-11-29", "total": 10},
                    {"id": 2, "day": "2026-11-29", "total": 5},
                ],
            )
            connection.exec_driver_sql(
                "INSERT INTO orders SELECT * FROM orders_raw WHERE total > 0"
            )

    @lc.job("export-orders", flow="shop-etl", upstream_jobs=["shop-etl.load-orders"])
    def export_orders() -> None:
        with engine.connect() as connection:
            rows = connection.exec_driver_sql("SELECT id, total FROM orders").all()
        s3 = boto3.client("s3", region_name="eu-west-1")
        s3.create_bucket(
            Bucket="lake", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
        )
        s3.put_object(
            Bucket="lake",
            Key="orders/2026/11/29/part-0.json",
            Body=json.dumps([list(row) for row in rows]).encode(),
        )
        athena = boto3.client("athena", region_name="eu-west-1")
        query = "INSERT INTO orders_by_day SELECT day, sum(total) FROM orders_lake GROUP BY day"
        with Stubber(athena) as stubber:
            stubber.add_response("start_query_execution", {"QueryExecutionId": "q-1"})
            stubber.add_response("get_query_execution", athena_execution("q-1", query))
            athena.start_query_execution(QueryString=query)
            athena.get_query_execution(QueryExecutionId="q-1")

    load_orders()
    with moto.mock_aws():
        export_orders()
    assert lc.flush(10)


def post_spark_event(live_server, secret: str, database: str) -> None:
    """What a Spark job reading the same table reports (same OpenLineage name)."""
    event = {
        "eventType": "COMPLETE",
        "eventTime": datetime.now(tz=UTC).isoformat(),
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "spark", "name": "orders_report.execute_insert"},
        "inputs": [{"namespace": PG, "name": f"{database}.public.orders"}],
        "outputs": [{"namespace": "s3://reports", "name": "orders_report"}],
    }
    request = urllib.request.Request(
        f"{live_server.url}/api/v1/lineage",
        data=json.dumps(event).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {secret}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201


def datasets(payload: dict, key: str) -> set[tuple[str, str]]:
    return {(item["namespace"], item["name"]) for item in payload[key]}


@pytest.mark.django_db(transaction=True)
def test_an_instrumented_pipeline_lands_in_the_catalog(live_server, collector, pipeline_database):
    database = pipeline_database.url.database
    run_pipeline(pipeline_database)

    events = list(Event.objects.filter(job_namespace="shop").order_by("event_time", "id"))
    by_job: dict[str, list[Event]] = {}
    for event in events:
        by_job.setdefault(event.job_name, []).append(event)
    assert set(by_job) == {"shop-etl.load-orders", "shop-etl.export-orders"}
    for job_events in by_job.values():
        assert [event.event_type for event in job_events] == ["START", "COMPLETE"]
        assert job_events[0].run_id == job_events[1].run_id

    load = by_job["shop-etl.load-orders"][1].payload
    assert datasets(load, "outputs") == {
        (PG, f"{database}.public.orders_raw"),
        (PG, f"{database}.public.orders"),
    }
    assert datasets(load, "inputs") == {(PG, f"{database}.public.orders_raw")}
    assert load["run"]["facets"]["parent"]["job"] == {"namespace": "shop", "name": "shop-etl"}

    export = by_job["shop-etl.export-orders"][1].payload
    assert datasets(export, "inputs") == {
        (PG, f"{database}.public.orders"),
        (ATHENA, "AwsDataCatalog.sales.orders_lake"),
    }
    assert datasets(export, "outputs") == {
        ("s3://lake", "orders"),
        (ATHENA, "AwsDataCatalog.sales.orders_by_day"),
    }
    upstream = export["run"]["facets"]["jobDependencies"]["upstream"]
    assert upstream[0]["job"] == {"namespace": "shop", "name": "shop-etl.load-orders"}

    # The derived catalog: the collector's table and a Spark reader of it are one dataset.
    post_spark_event(live_server, collector, database)
    derive_events(list(Event.objects.values_list("id", flat=True)))
    orders = Dataset.objects.for_alias(PG, f"{database}.public.orders").get()
    assert Job.objects.filter(namespace="shop", name="shop-etl.export-orders").exists()
    assert Run.objects.filter(job__name="shop-etl.export-orders").count() == 1
    readers = set(
        LineageEdge.objects.filter(source=orders).values_list("job__namespace", "job__name")
    )
    assert readers == {
        ("shop", "shop-etl.export-orders"),
        ("spark", "orders_report.execute_insert"),
    }
    writers = set(LineageEdge.objects.filter(target=orders).values_list("job__name", flat=True))
    assert writers == {"shop-etl.load-orders"}
    lake = Dataset.objects.for_alias("s3://lake", "orders").get()
    assert LineageEdge.objects.filter(source=orders, target=lake).exists()

    # ...and the read API serves the same catalog over HTTP to a read token.
    reader = ReadApi(live_server.url, create_token("e2e reader", "read")[1])
    found = reader.get("/api/v1/datasets/lookup", namespace=PG, name=f"{database}.public.orders")
    assert found["id"] == orders.id
    detail = reader.get(f"/api/v1/datasets/{orders.id}")
    assert {(alias["namespace"], alias["name"]) for alias in detail["aliases"]} == {
        (PG, f"{database}.public.orders")
    }
    assert {item["job"]["name"] for item in detail["producing_jobs"]} == {"shop-etl.load-orders"}
    assert {item["job"]["name"] for item in detail["consuming_jobs"]} == {
        "shop-etl.export-orders",
        "orders_report.execute_insert",
    }
    graph = reader.get(
        "/api/v1/lineage/graph", node=f"dataset:{orders.id}", direction="downstream", depth=1
    )
    downstream = {
        (node["namespace"], node["name"]) for node in graph["nodes"] if node["type"] == "dataset"
    }
    assert {("s3://lake", "orders"), ("s3://reports", "orders_report")} <= downstream
    jobs = reader.get("/api/v1/jobs", namespace="shop")["results"]
    assert {job["name"] for job in jobs} >= {"shop-etl.load-orders", "shop-etl.export-orders"}
    runs = reader.get("/api/v1/runs", job_name="shop-etl.export-orders")["results"]
    assert [run["state"] for run in runs] == ["COMPLETE"]


class ReadApi:
    """GETs against the live server with a read token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url, self.token = base_url, token

    def get(self, path: str, **params: object) -> dict:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        request = urllib.request.Request(
            f"{self.base_url}{path}{query}", headers={"Authorization": f"Bearer {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
            return json.loads(response.read())


EXITING_SERVICE = """
import lineage_collector as lc

lc.install()
with lc.job("nightly-export"):
    lc.add_input("postgres://etl:hunter2@db:5432/shop.public.orders")
    lc.add_output("s3n://AKIAEXAMPLE:hunter2@lake/exports/2026/12/07/part-0.csv")
try:
    with lc.job("nightly-connect"):
        raise ConnectionError("cannot reach postgresql://etl:hunter2@db:5432/shop")
except ConnectionError:
    pass
# no flush(): the README promises that exit flushes
"""


@pytest.mark.django_db(transaction=True)
def test_a_service_that_exits_without_flushing_lands_in_the_catalog_without_secrets(
    live_server,
):
    _, secret = create_token("collector exit e2e", "ingest")
    environment = {
        **os.environ,
        # The collector this test imported, wherever it is installed from.
        "PYTHONPATH": os.pathsep.join(
            [str(Path(lc.__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
        ),
        "OPENLINEAGE_URL": live_server.url,
        "OPENLINEAGE_API_KEY": secret,
        "OPENLINEAGE_NAMESPACE": "exit-e2e",
        # Generous for a loaded machine: the promise is that exit sends, within this bound.
        "LINEAGE_EXIT_FLUSH_TIMEOUT": "30",
    }
    subprocess.run([sys.executable, "-c", EXITING_SERVICE], env=environment, check=True, timeout=60)

    events = list(Event.objects.filter(job_namespace="exit-e2e").order_by("event_time", "id"))
    assert [(event.job_name, event.event_type) for event in events] == [
        ("nightly-export", "START"),
        ("nightly-export", "COMPLETE"),
        ("nightly-connect", "START"),
        ("nightly-connect", "FAIL"),
    ]
    assert "postgresql://***@db" in events[3].payload["run"]["facets"]["errorMessage"]["message"]
    complete = events[1].payload
    assert datasets(complete, "inputs") == {(PG.replace("127.0.0.1", "db"), "shop.public.orders")}
    assert datasets(complete, "outputs") == {("s3://lake", "exports")}
    # The raw log keeps what was sent: the password and the key never reached it.
    stored = json.dumps([event.payload for event in events])
    assert "hunter2" not in stored and "AKIAEXAMPLE" not in stored


@pytest.mark.django_db(transaction=True)
def test_the_openlineage_extra_sends_with_the_clients_own_settings(
    live_server, tmp_path, monkeypatch
):
    # docs/producers.md: everything built on openlineage-python, "the collector's
    # openlineage extra" included, takes the settings of its openlineage.yml.
    pytest.importorskip("openlineage.client")
    _, secret = create_token("collector openlineage e2e", "ingest")
    config = tmp_path / "openlineage.yml"
    config.write_text(
        "transport:\n"
        "  type: http\n"
        f"  url: {live_server.url}\n"
        "  endpoint: api/v1/lineage\n"
        "  compression: gzip\n"
        "  auth:\n"
        "    type: api_key\n"
        f"    apiKey: {secret}\n"
    )
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config))
    lc.install(transport="openlineage", namespace="ol-extra", flush_interval=0.01)
    try:
        with lc.job("through-the-client"):
            lc.add_output("s3://lake/reports/2026/12/07/r.csv")
        assert lc.flush(10)
        assert lc.stats().get("errors.send", 0) == 0, lc.stats()
    finally:
        lc.uninstall()
    events = list(Event.objects.filter(job_namespace="ol-extra").order_by("event_time", "id"))
    assert [event.event_type for event in events] == ["START", "COMPLETE"]
    assert datasets(events[1].payload, "outputs") == {("s3://lake", "reports")}


@pytest.mark.django_db(transaction=True)
def test_an_event_the_catalog_refuses_in_a_batch_is_counted_as_rejected_not_sent(
    live_server, collector, settings, monkeypatch
):
    # The catalog stores a batch's other events and answers 200 with the refused ones in
    # its report; the collector counted that event as sent, and logged nothing.
    monkeypatch.setitem(settings.LINEAGE, "MAX_EVENT_BYTES", 4096)
    counters.reset()  # process-wide: this test's counts only
    with lc.job("wide-export"):
        lc.add_output(*(f"s3://lake/exports/part-{index:04}/" for index in range(200)))
    lc.flush(10)
    stored = list(Event.objects.filter(job_name="wide-export").values_list("event_type", flat=True))
    assert stored == ["START"]  # the COMPLETE is over the catalog's (lowered) limit
    assert lc.stats()["events.sent"] == 1
    assert lc.stats()["events.rejected"] == 1
    assert lc.stats()["errors.send.rejected"] == 1

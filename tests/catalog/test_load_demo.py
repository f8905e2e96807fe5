"""`manage.py load_demo` (`make demo`): real producers' events, loaded once, with links to
what they show; and the sample event the front page and `make run` tell people to send."""

import re
from io import StringIO
from pathlib import Path

import orjson
import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from catalog.models import ColumnLineageEdge, Dataset, Job, Run
from catalog.services import demo as catalog_demo
from ingest import demo
from ingest.models import Event
from tests.catalog.conftest import run_event
from tests.catalog.helpers import openlineage, store
from tests.conftest import CORPUS

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _load(*args: str) -> str:
    out = StringIO()
    call_command("load_demo", *args, stdout=out)
    return out.getvalue()


def _sizes() -> tuple[int, int, int, int]:
    return Event.objects.count(), Dataset.objects.count(), Job.objects.count(), Run.objects.count()


def test_the_demo_shows_a_dag_column_lineage_and_an_alias_at_once(admin_client: Client) -> None:
    out = _load("--base-url", "http://localhost:8000")
    events = len(demo.demo_events())
    assert f"load_demo: {events} events" in out and f"{events} new" in out and "failed 0" in out

    dag = Job.objects.get(namespace="airflow_harness", name="lc_shop_sql")
    assert dag.children.count() == 4  # raw, clean, report and the failing task
    mart = Dataset.objects.for_alias(*catalog_demo.COLUMN_LINEAGE).get()
    assert ColumnLineageEdge.objects.filter(target=mart).exists()
    table = Dataset.objects.for_alias(*catalog_demo.ALIASED).get()
    assert (
        table
        == Dataset.objects.for_alias(
            "hdfs://dataproc-producer-test-m", "/user/hive/warehouse/t1"
        ).get()
    )

    links = re.findall(r"http://localhost:8000(\S+)", out)
    assert links == [
        "/admin/",
        f"/admin/catalog/job/{dag.id}/change/",
        f"/admin/lineage/?node=dataset:{mart.id}&lineage_columns=1",
        f"/admin/catalog/dataset/{table.id}/change/",
    ]
    for link in links:  # each opens for the admin `make run` created
        assert admin_client.get(link).status_code == 200, link
    picture = admin_client.get(links[2]).content.decode()
    assert "customer_id" in picture and "avg_order_value" in picture  # the mart's columns


def test_loading_the_demo_twice_stores_nothing_twice() -> None:
    _load()
    before = _sizes()
    out = _load()
    assert _sizes() == before
    events = len(demo.demo_events())
    assert f"0 new, {events} already stored; derived 0 now" in out


def test_a_catalog_with_other_events_is_refused_unless_forced() -> None:
    store([openlineage(run_event("COMPLETE", 1, "0190a000-0000-7000-8000-000000000009"))])
    with pytest.raises(CommandError, match="already holds events that are not the demo's") as no:
        _load()
    # Said the way a reader of the README runs it, through make (a bare --force is an
    # argument make does not pass on).
    assert "`make demo ARGS=--force`" in str(no.value)
    assert Event.objects.count() == 1  # nothing stored
    assert "failed 0" in _load("--force")
    assert Event.objects.count() == 1 + len(demo.demo_events())


def test_the_demo_events_are_the_test_fixtures_and_read_from_the_package() -> None:
    copies = {
        "airflow-2.10.5-lc_shop_sql.jsonl": "airflow-2.10.5/lc_shop_sql.jsonl",
        "dbt_default_mode_seeds_staging_marts.json": (
            "written/dbt_default_mode_seeds_staging_marts.json"
        ),
    }
    for name, fixture in copies.items():
        assert (demo.EVENTS_DIR / name).read_bytes() == (CORPUS / fixture).read_bytes()
    spark = CORPUS / "spark" / "dataproc-hive-simple-1.23.0"
    shipped = demo.EVENTS_DIR / "spark-dataproc-hive-1.23.0"
    assert sorted(path.name for path in shipped.iterdir()) == sorted(
        path.name for path in spark.iterdir()
    )
    for path in spark.iterdir():
        assert (shipped / path.name).read_bytes() == path.read_bytes()
    # Package data, not tests/: an installed image carries it.
    assert demo.EVENTS_DIR.parent == Path(demo.__file__).resolve().parent


def test_the_sample_event_the_front_page_and_make_run_name_is_accepted(
    ingest_client: Client,
) -> None:
    from catalog.front.snippets import SAMPLE_EVENT, snippets

    (curl,) = [snippet.text for snippet in snippets("http://x") if "curl" in snippet.text]
    assert f"-d @{SAMPLE_EVENT} " in curl
    run_local = (ROOT / "scripts" / "run_local.py").read_text()
    assert f"-d @{SAMPLE_EVENT} " in run_local
    assert re.findall(r"-d @(\S+)", run_local) == [SAMPLE_EVENT]
    body = (ROOT / SAMPLE_EVENT).read_bytes()  # the path is relative to the repository root
    assert orjson.loads(body)["eventType"] == "COMPLETE"
    answer = ingest_client.post("/api/v1/lineage", body, content_type="application/json")
    assert answer.status_code in (200, 201), answer.content
    assert Event.objects.count() == 1


def test_the_front_page_offers_the_demo_while_the_catalog_is_empty(admin_client: Client) -> None:
    html = admin_client.get("/").content.decode()
    assert 'id="demo"' in html and "make demo" in html and "examples/event.json" in html
    # Who may not see the counts is not told whether the catalog is empty either.
    assert 'id="demo"' not in Client().get("/").content.decode()
    _load()
    assert 'id="demo"' not in admin_client.get("/").content.decode()

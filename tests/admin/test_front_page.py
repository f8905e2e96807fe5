"""The front page at /: what is running, its health, links, and producers' snippets."""

import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from catalog.front import worker_seen
from catalog.models import Dataset, Job
from catalog.tasks import sweep_underived
from ingest.models import Event
from tests.deploy.rendering import ROOT

PRODUCERS = ["openlineage-python", "dbt-ol", "Airflow", "Spark", "Flink"]


def _health(html: str) -> dict[str, str]:
    """The figures of the health table by their element id."""
    return dict(re.findall(r'<td class="[^"]*" id="(\w+)">([^<]*)<', html))


@pytest.fixture(autouse=True)
def _no_worker_stamp() -> None:
    worker_seen._redis().delete(worker_seen.KEY)


@pytest.mark.django_db
def test_anonymous_visitors_get_links_and_snippets_but_no_counts(catalog: list[int]) -> None:
    response = Client().get("/", HTTP_HOST="catalog.example:8443")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    for href in ('href="/admin/"', 'href="/admin/lineage/"', 'href="/api/docs/"'):
        assert href in html
    assert 'href="/marquez/api/v1/"' in html
    assert "http://catalog.example:8443/api/v1/lineage" in html  # the ingest URL, filled in
    for producer in PRODUCERS:
        assert f'data-producer="{producer}' in html
    assert "spark.openlineage.transport.url=http://catalog.example:8443" in html
    assert "export OPENLINEAGE_URL=http://catalog.example:8443" in html
    assert 'id="health-hidden"' in html and 'id="health"' not in html
    assert "load_orders" not in html and "orders" not in html  # no names either
    assert "lc_ingest_..." in html  # a placeholder, never a real token


@pytest.mark.django_db
def test_staff_see_what_is_stored_waiting_and_whether_the_worker_runs(
    catalog: list[int], reader_client: Client, ingest_client: Client
) -> None:
    # One more event, not derived: it waits.
    late = {
        "eventType": "START",
        "eventTime": "2026-11-01T10:00:00Z",
        "run": {"runId": "0190a000-0000-7000-8000-000000000001"},
        "job": {"namespace": "etl", "name": "late"},
        "producer": "https://example.com/front-page-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    assert (
        ingest_client.post("/api/v1/lineage", late, content_type="application/json").status_code
        == 201
    )
    from django.db import connection

    with CaptureQueriesContext(connection) as queries:
        html = reader_client.get("/").content.decode()
    health = _health(html)
    assert health["events"] == str(Event.objects.count())
    assert health["jobs"] == str(Job.objects.count()) == "3"
    assert health["datasets"] == str(Dataset.objects.count())
    assert health["pending"] == "1"
    assert health["failed"] == "0"
    assert health["worker"] == "never seen"
    # The session and its user, its permissions (its own and its groups', as /api/v1/stats
    # checks them), the table sizes, the backlog: nothing per row.
    assert len(queries) == 6, [query["sql"] for query in queries]

    # What the scheduler has a worker run every 5 s (for events older than 5 s).
    sweep_underived.apply(kwargs={"older_than_seconds": 0})
    health = _health(reader_client.get("/").content.decode())
    assert health["worker"] == "running"
    assert health["pending"] == "0"
    worker_seen.record(datetime.now(UTC) - timedelta(minutes=5))
    assert _health(reader_client.get("/").content.decode())["worker"] == "stale"


@pytest.mark.django_db
def test_a_logged_in_user_who_is_not_staff_sees_no_counts(catalog: list[int]) -> None:
    client = Client()
    client.force_login(User.objects.create_user("visitor", password="pw"))
    html = client.get("/").content.decode()
    assert 'id="health"' not in html and "this account may not" in html


@pytest.mark.django_db
def test_anonymous_marquez_reads_do_not_open_the_counts(catalog: list[int], settings) -> None:  # type: ignore[no-untyped-def]
    """The figures are /api/v1/stats', which has no anonymous reads (issue 38, item 10)."""
    with override_settings(MARQUEZ_API={**settings.MARQUEZ_API, "ALLOW_ANONYMOUS_READS": True}):
        html = Client().get("/").content.decode()
        assert Client().get("/api/v1/stats").status_code == 401
    assert 'id="health"' not in html


@pytest.mark.django_db
def test_the_marquez_link_follows_the_mount_setting(settings) -> None:  # type: ignore[no-untyped-def]
    with override_settings(MARQUEZ_API={**settings.MARQUEZ_API, "ENABLED": False}):
        html = Client().get("/").content.decode()
    assert "/marquez/api/v1/" not in html


@pytest.mark.parametrize("module", ["development", "production"])
def test_the_front_page_answers_in_development_and_production_settings(module: str) -> None:
    """No DEBUG 404 and no problem document at /, whichever settings run."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")} | {
        "DJANGO_SETTINGS_MODULE": f"config.settings.{module}",
        "DJANGO_SECRET_KEY": "front-page-test-key-0123456789-0123456789-0123456789",
    }
    script = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "response = Client().get('/', HTTP_HOST='localhost', secure=True)\n"
        "print(response.status_code, response['Content-Type'],"
        " b'Sending lineage' in response.content)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "200 text/html; charset=utf-8 True"


def test_every_snippet_names_this_server_and_parses_as_its_tool_reads_it() -> None:
    """The Airflow transport is JSON, the YAML ones are YAML, each points at the URL given."""
    import json

    import yaml

    from catalog.front.snippets import snippets

    base = "https://catalog.example:8443"
    by_producer = {snippet.producer.split(" ")[0]: snippet.text for snippet in snippets(base)}
    assert set(by_producer) >= {"openlineage-python", "dbt-ol", "Airflow", "Spark", "Flink"}
    airflow = by_producer["Airflow"].split("transport = ", 1)[1]
    assert (
        json.loads(airflow)["url"] == base and json.loads(airflow)["endpoint"] == "api/v1/lineage"
    )
    assert yaml.safe_load(by_producer["openlineage-python"])["transport"]["url"] == base
    flink = yaml.safe_load(by_producer["Flink"])
    assert flink["openlineage.transport.url"] == base and flink["execution.attached"] is True
    assert f"spark.openlineage.transport.url={base} " in by_producer["Spark"]
    assert f"export OPENLINEAGE_URL={base}\n" in by_producer["dbt-ol"]
    # openlineage-python's variables are a snippet of its own, not dbt-ol's (issue 39).
    (environment,) = [
        s.text for s in snippets(base) if s.producer.startswith("openlineage-python,")
    ]
    assert environment.startswith(f"export OPENLINEAGE_URL={base}\n")

"""A small derived catalog and users of each role, for the admin tests."""

import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.test import Client

from catalog.admin.dashboard import CACHE_KEY
from catalog.permissions import READERS, STEWARDS, registry_read_models
from catalog.services import derive
from ingest.models import Event
from ingest.services import create_token

LAKE = "s3://lake"
DB = "postgres://db:5432"
PRODUCER = "https://example.com/admin-tests"
# The events happen an hour ago, not on a fixed date: the dashboard shows the last 24 hours.
START = (datetime.now(UTC) - timedelta(hours=1)).replace(second=0, microsecond=0)


def at(minutes: int) -> str:
    """An eventTime ``minutes`` after START, as OpenLineage writes it."""
    return (START + timedelta(minutes=minutes)).isoformat(timespec="milliseconds")


def run_event(
    job: str,
    event_type: str,
    run_id: str,
    inputs: list[tuple[str, str]] = (),  # type: ignore[assignment]
    outputs: list[tuple[str, str]] = (),  # type: ignore[assignment]
    time: str | None = None,
    output_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time or at(0),
        "run": {"runId": run_id},
        "job": {"namespace": "etl", "name": job},
        "inputs": [{"namespace": ns, "name": name} for ns, name in inputs],
        "outputs": [
            {"namespace": ns, "name": name, "facets": output_facets or {}} for ns, name in outputs
        ],
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def ingest_and_derive(client: Client, events: list[dict[str, Any]]) -> list[int]:
    response = client.post(
        "/api/v1/lineage/batch", data=orjson.dumps(events), content_type="application/json"
    )
    assert response.status_code in (200, 201, 207), response.content
    record = {"resource": "orders", "subject": "dataset:orders", "action": "validated"}
    response = client.post(
        "/api/v1/metadata", data=orjson.dumps(record), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    ids = list(Event.objects.order_by("id").values_list("id", flat=True))
    derive.derive_events(ids)
    return ids


def lineage_events() -> list[dict[str, Any]]:
    """orders (db) → load_orders → lake/orders → report (FAIL) → lake/orders_report;
    lake/raw/orders_v1 and lake/raw/orders_v2 are loaded by a legacy job; the warehouse
    names lake/orders also as hive (symlink), so that dataset has two aliases."""
    load, report, legacy = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    facet = "https://openlineage.io/spec/facets/1-0-1/"
    schema_and_columns = {
        "schema": {
            "_producer": PRODUCER,
            "_schemaURL": facet + "SchemaDatasetFacet.json",
            "fields": [{"name": "id", "type": "bigint"}, {"name": "total", "type": "numeric"}],
        },
        "columnLineage": {
            "_producer": PRODUCER,
            "_schemaURL": facet + "ColumnLineageDatasetFacet.json",
            "fields": {
                "total": {
                    "inputFields": [
                        {"namespace": DB, "name": "shop.public.orders", "field": "amount"}
                    ]
                }
            },
        },
    }
    symlinks = {
        **schema_and_columns,
        "symlinks": {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
            "identifiers": [
                {"namespace": "hive://metastore:9083", "name": "lake.orders", "type": "TABLE"}
            ],
        },
    }
    return [
        run_event("load_orders", "START", load, [(DB, "shop.public.orders")], [(LAKE, "orders")]),
        run_event(
            "load_orders",
            "COMPLETE",
            load,
            [(DB, "shop.public.orders")],
            [(LAKE, "orders")],
            time=at(5),
            output_facets=symlinks,
        ),
        run_event("report", "FAIL", report, [(LAKE, "orders")], [(LAKE, "orders_report")]),
        run_event(
            "legacy_load",
            "COMPLETE",
            legacy,
            [(DB, "shop.public.orders")],
            [(LAKE, "raw/orders_v1")],
        ),
        run_event("legacy_load", "COMPLETE", str(uuid.uuid4()), [], [(LAKE, "raw/orders_v2")]),
    ]


@pytest.fixture(autouse=True)
def _fresh_dashboard() -> None:
    cache.delete(CACHE_KEY)  # the dashboard is cached for a minute per process


@pytest.fixture
def catalog(ingest_client: Client) -> list[int]:
    """The derived catalog of ``lineage_events()``; returns the event ids."""
    return ingest_and_derive(ingest_client, lineage_events())


def write_catalog() -> list[int]:
    """What ``catalog`` writes (its ingest token too), for a module fixture that writes it
    once inside ``module_transaction`` (ADR 0113, ADR 0147); returns the event ids."""
    token = create_token("test ingest", "ingest")[1]
    return ingest_and_derive(Client(HTTP_AUTHORIZATION=f"Bearer {token}"), lineage_events())


@pytest.fixture
def groups(db: None) -> None:
    """Both groups with the registry's permissions, as post_migrate's
    ``apply_registry_permissions`` leaves them after the test database's migrate and after
    every transactional test's flush that changed them (tests/flush.py, ADR 0149): checked,
    not written again (about 45 ms a test, ADR 0210)."""
    view = {
        (label, f"view_{model}")
        for label, models in registry_read_models().items()
        for model in models
    }
    for name in (READERS, STEWARDS):
        held = set(
            Group.objects.get(name=name).permissions.values_list(
                "content_type__app_label", "codename"
            )
        )
        assert view <= held, (name, view - held)


def make_user(name: str, group: str | None = None, superuser: bool = False) -> User:
    user = User.objects.create_user(name, password="pw", is_staff=True, is_superuser=superuser)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def steward(groups: None) -> User:
    return make_user("steward", STEWARDS)


@pytest.fixture
def reader(groups: None) -> User:
    return make_user("reader", READERS)


@pytest.fixture
def superuser(db: None) -> User:
    return make_user("root", superuser=True)


@pytest.fixture
def steward_client(steward: User) -> Client:
    client = Client()
    client.force_login(steward)
    return client


@pytest.fixture
def reader_client(reader: User) -> Client:
    client = Client()
    client.force_login(reader)
    return client


@pytest.fixture
def super_client(superuser: User) -> Client:
    client = Client()
    client.force_login(superuser)
    return client


# A real browser (tests/admin/test_browser*.py): Debian's chromium, headless, driven by
# selenium; the tests skip (never pass) when either is missing (`make browser` installs them).
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
]


@pytest.fixture
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip(f"chromium/chromedriver not installed ({CHROMIUM}, {CHROMEDRIVER})")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.implicitly_wait(5)
    try:
        yield driver
    finally:
        driver.quit()


def and_wait(driver: Any, action: Any) -> None:
    """Do something that loads a new page and wait until the old one is gone."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    old_page = driver.find_element(By.TAG_NAME, "html")
    action()
    WebDriverWait(driver, 15).until(expected_conditions.staleness_of(old_page))

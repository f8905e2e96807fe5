"""Issue 38 item 5: the web process's reads stop at a statement timeout, and a stopped read
is a 503, never a 500 (core/statement_timeout.py). That only the web entry point sets it,
and the worker and the commands do not: tests/deploy/test_wsgi.py.

The slow read is real: another connection holds a lock on the datasets table, so the read
waits in PostgreSQL (statement_timeout counts lock waits). The holder's session ends itself
after 3 s (idle_in_transaction_session_timeout), so without the timeout the read is slow,
not stuck, and the test fails on its answer.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client

from core.statement_timeout import limit_statement_time

# Every statement of the test runs under it, its set-up's included: at 100 ms a session
# lookup was cut on a machine at load 15 (a fresh clone beside six other jobs). The locked
# reads wait it out, so each costs this much wall time.
TIMEOUT_MS = 500

pytestmark = pytest.mark.django_db(transaction=True)  # the web connection is a fresh one


@pytest.fixture
def web_connection(transactional_db: None, settings: object) -> Iterator[None]:
    """The test's connection opened as the web entry point (config/wsgi.py) opens it, with
    the setting overridden to a tiny timeout; the suite's connection again afterwards (once
    the test database is set up, which opens connections of its own)."""
    options = connection.settings_dict["OPTIONS"]
    saved = dict(options)
    settings.LINEAGE = {**settings.LINEAGE, "READ_STATEMENT_TIMEOUT_MS": TIMEOUT_MS}  # type: ignore[attr-defined]
    connection.close()
    limit_statement_time(
        {"default": connection.settings_dict},
        settings.LINEAGE["READ_STATEMENT_TIMEOUT_MS"],  # type: ignore[attr-defined]
    )
    yield
    connection.close()
    options.clear()
    options.update(saved)


@contextmanager
def datasets_locked(table: str = "catalog_dataset") -> Iterator[None]:
    holder = connections.create_connection("default")
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SET LOCAL idle_in_transaction_session_timeout = 3000")
            cursor.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield
    finally:
        holder.close()  # ends its transaction: the lock goes with it


def test_a_slow_read_is_a_503_problem_on_the_api_and_a_page_in_the_admin(
    web_connection: None, read_client: Client
) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == f"{TIMEOUT_MS}ms"
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("boss", "b@example.com", "pw"))
    # Both pages once first: what a cold process imports is not counted against the lock.
    assert read_client.get("/api/v1/datasets").status_code == 200
    assert admin.get("/admin/catalog/dataset/").status_code == 200

    with datasets_locked():
        api = read_client.get("/api/v1/datasets")
        page = admin.get("/admin/catalog/dataset/")

    assert api.status_code == 503, api.content
    assert api["Content-Type"] == "application/problem+json"
    assert api["Retry-After"] == "5"
    assert api.json()["type"] == "urn:lineage-catalog:problem:statement-timeout"
    assert page.status_code == 503, page.content[:500]
    assert page["Content-Type"].startswith("text/html")
    assert page["Retry-After"] == "5"
    assert b'id="statement-timeout"' in page.content
    # The connection serves the next request: nothing was left aborted.
    assert read_client.get("/api/v1/datasets").status_code == 200


def test_a_slow_read_on_the_marquez_mount_is_a_503_in_marquez_shape(
    web_connection: None, read_client: Client
) -> None:
    """docs/deploy.md "Statement timeout": Marquez's error shape on the mount."""
    search = "/marquez/api/v1/namespaces"
    assert read_client.get(search).status_code == 200
    with datasets_locked("catalog_namespace"):
        answer = read_client.get(search)
    assert answer.status_code == 503, answer.content
    assert answer["Retry-After"] == "5"
    assert set(answer.json()) == {"code", "message", "details"}
    assert answer.json()["code"] == 503
    assert read_client.get(search).status_code == 200


def test_an_ingest_cut_by_the_timeout_stores_nothing_and_its_retry_stores_it_once(
    web_connection: None, ingest_client: Client
) -> None:
    """docs/deploy.md "Statement timeout": a write cut by it is rolled back whole: nothing
    is stored and the client's retry stores it."""
    from ingest.models import Event
    from tests.ingest.helpers import LINEAGE, post_json, run_event

    assert post_json(ingest_client, LINEAGE, run_event()).status_code == 201  # warm
    event = run_event()
    with datasets_locked("ingest_event"):
        cut = post_json(ingest_client, LINEAGE, event)
    assert cut.status_code == 503, cut.content
    assert cut["Retry-After"] == "5"
    assert cut.json()["type"] == "urn:lineage-catalog:problem:statement-timeout"
    assert Event.objects.count() == 1
    assert post_json(ingest_client, LINEAGE, event).status_code == 201
    assert post_json(ingest_client, LINEAGE, event).status_code in (200, 201)  # a resend
    assert Event.objects.count() == 2


def test_with_the_setting_at_0_the_mount_keeps_the_connections_own_timeout(
    web_connection: None, read_client: Client, settings
) -> None:
    """docs/deploy.md: behind PgBouncer the timeout is a database role's and the setting 0;
    the mount must not lift the role's timeout for its reads (a SET LOCAL of 0 did)."""
    search = "/marquez/api/v1/namespaces"
    assert read_client.get(search).status_code == 200
    # The connection keeps its 500 ms, as a role's setting would; the service's is off.
    settings.LINEAGE = {**settings.LINEAGE, "READ_STATEMENT_TIMEOUT_MS": 0}
    with datasets_locked("catalog_namespace"):
        answer = read_client.get(search)
    assert answer.status_code == 503, answer.content

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

TIMEOUT_MS = 100

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
def datasets_locked() -> Iterator[None]:
    holder = connections.create_connection("default")
    try:
        holder.set_autocommit(False)
        with holder.cursor() as cursor:
            cursor.execute("SET LOCAL idle_in_transaction_session_timeout = 3000")
            cursor.execute("LOCK TABLE catalog_dataset IN ACCESS EXCLUSIVE MODE")
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

"""Shared fixtures: tokens, HTTP clients, the OpenLineage corpus, a module's shared rows."""

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test import Client

from ingest import enqueue
from ingest.authentication import clear_token_cache
from ingest.services import create_token
from tests import flush, worker_database

# Real OpenLineage events kept in the repository; SOURCES.md there names each file's origin.
CORPUS = Path(
    os.environ.get("LINEAGE_CORPUS", Path(__file__).resolve().parent / "fixtures" / "openlineage")
)


@pytest.fixture(scope="session")
def django_db_keepdb(request: pytest.FixtureRequest) -> bool:
    """pytest-django's --reuse-db, or a worker whose database is a copy of the run's
    template (tests/worker_database.py): opened as it is, not migrated again."""
    return bool(request.config.getvalue("reuse_db")) or worker_database.applies(request.config)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
    request: pytest.FixtureRequest,
    django_db_blocker: Any,
) -> Iterator[None]:
    """pytest-django's (the worker's suffix), then the worker's database cloned from the
    run's migrated template, before pytest-django's django_db_setup opens it."""
    if worker_database.applies(request.config):
        yield from worker_database.clone_for_worker(request.config, django_db_blocker)
    else:
        yield


@pytest.fixture(scope="session", autouse=True)
def _flush_written_tables_only() -> Iterator[None]:
    """A transactional test's flush truncates the tables that hold rows, and post_migrate's
    only when the test changed them (tests/flush.py)."""
    with flush.written_tables_only():
        yield


def pytest_sessionfinish(session: pytest.Session) -> None:
    # The xdist controller, after every worker ended, drops the run's template.
    config = session.config
    if config.getoption("dist", "no") != "no" and not hasattr(config, "workerinput"):
        worker_database.drop_template(config)


@pytest.fixture(scope="module")
def module_transaction(
    request: pytest.FixtureRequest, django_db_setup: None, django_db_blocker: Any
) -> Iterator[Callable[[], AbstractContextManager[None]]]:
    """One transaction around a test module, for rows several of its tests read: Django's
    ``setUpTestData`` for pytest functions (ADR 0113). A module fixture writes its rows once
    inside ``with module_transaction():``; each test's own ``db`` is then a savepoint in this
    transaction and is rolled back to it, so every test starts from the same rows as when
    each built them itself; the whole is rolled back after the module's last test. A module
    with a transactional test cannot share a transaction, so it is refused here."""
    module = request.node
    for item in request.session.items:
        if item.getparent(pytest.Module) is not module:
            continue
        markers = [marker.kwargs.get("transaction") for marker in item.iter_markers("django_db")]
        names = getattr(item, "fixturenames", ())
        if any(markers) or "transactional_db" in names or "live_server" in names:
            pytest.fail(f"{item.nodeid} is transactional: its module cannot share rows")
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        # As Django's TestCase marks its own blocks: a service's durable block may open
        # inside (it commits nothing here; every write is rolled back).
        outer._from_testcase = True
        outer.__enter__()
    try:
        yield django_db_blocker.unblock
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _fresh_token_cache() -> Iterator[None]:
    clear_token_cache()
    yield
    clear_token_cache()


@pytest.fixture
def no_task_waiting() -> Iterator[None]:
    """Nothing of another test in the publisher, and no derive task marked waiting in the
    test broker (no worker runs to start it), before the test and after it (ADR 0053)."""
    assert enqueue.wait_until_published(timeout=10)
    enqueue.derive_task_started()
    yield
    assert enqueue.wait_until_published(timeout=10)
    enqueue.derive_task_started()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"The OpenLineage corpus is missing at {CORPUS} (set LINEAGE_CORPUS).")
    return CORPUS


@pytest.fixture
def ingest_token(db: None) -> str:
    return create_token("test ingest", "ingest")[1]


@pytest.fixture
def read_token(db: None) -> str:
    return create_token("test read", "read")[1]


@pytest.fixture
def steady_token_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolved tokens stay cached for the whole test instead of 5 s: a pinned query count
    measured after a warming request must not depend on how long the fixtures took (on a
    loaded machine the cache expired during setup and the count gained the token lookup)."""
    from ingest import authentication

    monkeypatch.setattr(authentication, "_CACHE_SECONDS", 3600.0)


@pytest.fixture
def fresh_connection() -> Iterator[None]:
    """The test's database connection opened for it alone, closed after it: nothing an
    earlier test prepared on a kept connection is there (core.prepared, ADR 0112, 0119).
    Ask for it before the fixtures that use the database."""
    connection.close()
    yield
    connection.close()


@pytest.fixture
def ingest_client(ingest_token: str) -> Client:
    """A client that sends the ingest token on every request."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {ingest_token}")


@pytest.fixture
def read_client(read_token: str) -> Client:
    """A client that sends the read token on every request."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {read_token}")

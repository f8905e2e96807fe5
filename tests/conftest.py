"""Shared fixtures: tokens, HTTP clients, the OpenLineage corpus."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from ingest import enqueue
from ingest.authentication import clear_token_cache
from ingest.services import create_token

# Real OpenLineage events kept in the repository; SOURCES.md there names each file's origin.
CORPUS = Path(
    os.environ.get("LINEAGE_CORPUS", Path(__file__).resolve().parent / "fixtures" / "openlineage")
)


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
def ingest_client(ingest_token: str) -> Client:
    """A client that sends the ingest token on every request."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {ingest_token}")


@pytest.fixture
def read_client(read_token: str) -> Client:
    """A client that sends the read token on every request."""
    return Client(HTTP_AUTHORIZATION=f"Bearer {read_token}")

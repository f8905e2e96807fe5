"""Fixtures the fault tests share: a migrated template database, cloned per test."""

from collections.abc import Iterator

import pytest

from tests.faults import processes

MAIN_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(scope="module")
def template_database() -> Iterator[str]:
    """A migrated database to clone per test (CREATE DATABASE ... TEMPLATE is fast)."""
    url = processes.create_database(MAIN_SERVER)
    env = processes.service_env(url, "redis://127.0.0.1:1/0")
    processes.manage(env, "migrate", "--no-input")
    yield url.rsplit("/", 1)[1]
    processes.drop_database(url)


@pytest.fixture
def database(template_database: str) -> Iterator[str]:
    url = processes.create_database(MAIN_SERVER, template=template_database)
    yield url
    processes.drop_database(url)

"""Fixtures the fault tests share: a migrated template database, cloned per test."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests import worker_database
from tests.faults import processes

MAIN_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(scope="module")
def template_database(request: pytest.FixtureRequest, django_db_blocker: Any) -> Iterator[str]:
    """A migrated database to clone per test (CREATE DATABASE ... TEMPLATE is fast). Under
    xdist it is a copy of the run's migrated template (ADR 0108) when that is on this
    server, instead of a migrate of its own (a process's start-up and every migration)."""
    from django.db import connection

    settings = connection.settings_dict
    here = (settings["HOST"] or "127.0.0.1", str(settings["PORT"] or 5432))
    if worker_database.applies(request.config) and here == ("127.0.0.1", "5432"):
        with worker_database.run_template(request.config, django_db_blocker) as template:
            url = processes.create_database(MAIN_SERVER, template=template)
    else:
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

"""Fixtures the fault tests share: a migrated template database, cloned per test."""

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests import worker_database
from tests.faults import processes, tokens

MAIN_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"


@pytest.fixture(scope="session")
def dropping() -> Iterator[list[threading.Thread]]:
    """The fault tests' databases being dropped, each while the tests after it run (DROP
    DATABASE waits for a checkpoint: 3-7 s of a loaded machine, ADR 0137); waited for at
    the end of the session."""
    threads: list[threading.Thread] = []
    yield threads
    for thread in threads:
        thread.join(timeout=120)


def _drop_later(url: str, dropping: list[threading.Thread]) -> None:
    thread = threading.Thread(target=processes.drop_database, args=(url,), daemon=True)
    thread.start()
    dropping.append(thread)


@pytest.fixture(scope="module")
def template_database(
    request: pytest.FixtureRequest, django_db_blocker: Any, dropping: list[threading.Thread]
) -> Iterator[str]:
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
    _drop_later(url, dropping)


@pytest.fixture
def template_url(template_database: str) -> str:
    """The URL of the module's migrated template, for a copy onto a private cluster
    (processes.copy_database)."""
    return MAIN_SERVER.rsplit("/", 1)[0] + f"/{template_database}"


@pytest.fixture
def database(template_database: str, dropping: list[threading.Thread]) -> Iterator[str]:
    """A copy of the module's template for one test, dropped while the next test runs."""
    url = processes.create_database(MAIN_SERVER, template=template_database)
    yield url
    _drop_later(url, dropping)


@pytest.fixture
def new_token(django_db_blocker: Any) -> tokens.NewToken:
    """``new_token(env, scope)``: a token of ``scope`` on ``env``'s database, made by
    `manage.py create_token` run in this process (tests/faults/tokens.py)."""
    return lambda env, scope: tokens.create_token(django_db_blocker, env, scope)

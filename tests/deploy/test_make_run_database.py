"""README: `make run` "finds PostgreSQL (DATABASE_URL, else 127.0.0.1:5432 as user postgres;
with none it can log in to, it starts an embedded one from the pgserver package)".

A PostgreSQL that answers but refuses the login (a distribution's server asks `postgres`
for a password over TCP) was announced as "no PostgreSQL on 127.0.0.1:5432". These ask
``database_url`` with the real server of the test run, under a role it does not have, and
with a port nothing listens on; the embedded server itself is not started (its start is
what scripts/run_local.py's ``embedded_database_url`` does, past the line it says).
"""

import os
import socket

import pytest
from django.db import connection

import scripts.run_local as run_local


def _why_embedded(monkeypatch: pytest.MonkeyPatch, url: str) -> str:
    reasons: list[str] = []

    def embedded(database: str, why: str) -> str:
        reasons.append(why)
        return "embedded"

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setattr(run_local, "DEFAULT_DATABASE_URL", url)
    monkeypatch.setattr(run_local, "embedded_database_url", embedded)
    assert run_local.database_url() == "embedded"
    [why] = reasons
    return why


def test_a_postgresql_that_refuses_the_login_is_named_not_called_absent(monkeypatch) -> None:
    host = connection.settings_dict["HOST"] or "127.0.0.1"
    port = int(connection.settings_dict["PORT"] or 5432)
    url = f"postgres://no_such_role_of_make_run@{host}:{port}/lineage_catalog"
    why = _why_embedded(monkeypatch, url)
    assert why.startswith(
        f"PostgreSQL on {host}:{port} refused the login as no_such_role_of_make_run"
    )
    assert why.endswith("set DATABASE_URL to use it")
    assert "no PostgreSQL" not in why


def test_no_postgresql_listening_is_said_so(monkeypatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    why = _why_embedded(monkeypatch, f"postgres://postgres@127.0.0.1:{port}/lineage_catalog")
    assert why == f"no PostgreSQL on 127.0.0.1:{port}"


def test_a_missing_database_is_created_and_one_there_is_kept(monkeypatch, capsys) -> None:
    """README: make run "creates the database if it is missing", the rest untouched. A name
    that needs quoting (capitals, a dash) is created as written, so the next run finds it."""
    import psycopg

    host = connection.settings_dict["HOST"] or "127.0.0.1"
    port = int(connection.settings_dict["PORT"] or 5432)
    user = connection.settings_dict["USER"] or "postgres"
    name = f"Make-Run-{os.getpid()}"
    url = f"postgres://{user}@{host}:{port}/{name}"
    maintenance = f"postgres://{user}@{host}:{port}/postgres"
    monkeypatch.setenv("DATABASE_URL", url)
    try:
        assert run_local.database_url() == url
        assert f"[make run] creating database {name!r}" in capsys.readouterr().out
        with psycopg.connect(url) as created:
            created.execute("CREATE TABLE kept (x int)")
        assert run_local.database_url() == url  # there now: not created again, kept whole
        assert "creating database" not in capsys.readouterr().out
        with psycopg.connect(url) as again:
            assert again.execute("SELECT count(*) FROM kept").fetchone() == (0,)
    finally:
        with psycopg.connect(maintenance, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')

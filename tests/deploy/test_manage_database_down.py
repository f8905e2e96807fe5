"""manage.py with PostgreSQL unreachable: one line on stderr naming it, exit 69, no
traceback (``--traceback`` shows it, as for Django's CommandError). It printed Django's and
psycopg's traceback for every command; the docs promise operators readable messages."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.processes import current_database_url

ROOT = Path(__file__).resolve().parents[2]
CLOSED = "postgres://postgres@127.0.0.1:9/lineage_catalog"  # the discard port: refused


def _manage(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": CLOSED, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("command", [["retention", "--days", "30"], ["showmigrations"]])
def test_a_command_without_postgresql_says_so_in_one_line(command: list[str]) -> None:
    result = _manage(*command)
    assert result.returncode == 69, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("manage.py: PostgreSQL is unavailable: "), lines
    assert "127.0.0.1" in lines[0] and "9" in lines[0]
    assert lines[0].endswith("check that it is running and that DATABASE_URL names it"), lines


@pytest.mark.django_db
def test_a_database_not_created_yet_is_told_who_creates_it() -> None:
    # A newcomer's `make demo` (or any command) before `make run` created the database.
    server = current_database_url().rsplit("/", 1)[0]
    missing = f"{server}/lc_no_such_database_of_this_test"
    env = {**os.environ, "DATABASE_URL": missing, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        [sys.executable, "manage.py", "showmigrations"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 69, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert 'database "lc_no_such_database_of_this_test" does not exist' in line, line
    assert "`make run` does on its first run" in line and "DATABASE_URL" in line, line


def test_the_traceback_is_there_when_asked_for() -> None:
    result = _manage("showmigrations", "--traceback")
    assert result.returncode == 1 and "Traceback" in result.stderr


@pytest.mark.django_db
def test_a_statements_own_failure_keeps_its_traceback() -> None:
    # A statement timeout (SQLSTATE 57014) is the command's failure, not the database's
    # absence: it is not turned into the one line.
    code = (
        "from django.db import connection; cursor = connection.cursor(); "
        "cursor.execute('SET statement_timeout = 1'); cursor.execute('SELECT pg_sleep(1)')"
    )
    env = {
        **os.environ,
        "DATABASE_URL": current_database_url(),  # the test database, which exists
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" in result.stderr, result.stderr
    assert "statement timeout" in result.stderr and "unavailable" not in result.stderr

"""Each xdist worker's test database is a copy of one migrated in this run (ADR 0108).

pytest-django gives worker gwN the test database `test_<name>_gwN` and builds it by running
every migration: about 8 CPU seconds per worker, at once, at the start of the run. Here the
first worker to need a database migrates `test_<name>_template` once, under a file lock the
others wait on, and each worker's database is `CREATE DATABASE ... TEMPLATE` of it (a file
copy). pytest-django then opens it as a kept database (`--reuse-db`'s path: its migrate
finds nothing to apply) and this module drops it after the worker's session, as
pytest-django would have. The controller drops the template at the end of the run.

The template is marked with the run's id (xdist's testrunuid, as the database's comment),
so a template left by an earlier run, of other migrations, is built again, never reused.
Not used outside xdist, nor with --reuse-db, --create-db or --no-migrations, whose
databases stay pytest-django's.
"""

import fcntl
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def applies(config: pytest.Config) -> bool:
    """Whether this process's test database is cloned from the run's template."""
    return (
        hasattr(config, "workerinput")
        and not config.getvalue("reuse_db")
        and not config.getvalue("create_db")
        and not config.getvalue("nomigrations")
    )


def template_name(settings_dict: dict[str, Any]) -> str:
    # The database name from DATABASE_URL, so two checkouts on other names never share one.
    return f"test_{settings_dict['NAME']}_template"


def _configured_template() -> str:
    from django.conf import settings

    return template_name(settings.DATABASES["default"])


# Taken when tests/conftest.py imports this module, before pytest-django points the
# connection's NAME at the worker's test database.
TEMPLATE = _configured_template()


@contextmanager
def _locked(name: str) -> Iterator[None]:
    path = Path(tempfile.gettempdir()) / f"lineage-catalog-{name}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@contextmanager
def run_template(config: pytest.Config, blocker: Any) -> Iterator[str]:
    """The run's migrated template, built if no worker has yet, locked against the other
    workers while the caller copies it (a copy needs the template without sessions)."""
    from django.db import connection

    template = TEMPLATE
    run_id = str(config.workerinput["testrunuid"])  # type: ignore[attr-defined]
    with blocker.unblock(), _locked(template):
        with connection.creation._nodb_cursor() as cursor:
            cursor.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                [template],
            )
            row = cursor.fetchone()
        if row is None or row[0] != run_id:
            _build(connection, template)
            with connection.creation._nodb_cursor() as cursor:
                # A utility statement takes no parameters; the id is xdist's hex uuid.
                literal = "'" + run_id.replace("'", "''") + "'"
                cursor.execute(f"COMMENT ON DATABASE {_quote(template)} IS {literal}")
        yield template


def _build(connection: Any, template: str) -> None:
    """Django's own test database creation, under the template's name: drops a stale one,
    migrates; the connection's settings are put back after."""
    settings_dict = connection.settings_dict
    name, test_name = settings_dict["NAME"], settings_dict["TEST"].get("NAME")
    settings_dict["TEST"]["NAME"] = template
    try:
        connection.creation.create_test_db(
            verbosity=0, autoclobber=True, serialize=False, keepdb=False
        )
    finally:
        connection.close()  # a template must have no session open when copied
        settings_dict["NAME"] = name
        settings_dict["TEST"]["NAME"] = test_name


def clone_for_worker(config: pytest.Config, blocker: Any) -> Iterator[None]:
    """Create this worker's test database from the run's template, and drop it after the
    session."""
    from django.db import connection

    worker_name = connection.settings_dict["TEST"]["NAME"]  # test_<name>_gwN (pytest-django)
    original_name = connection.settings_dict["NAME"]
    with run_template(config, blocker) as template, connection.creation._nodb_cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {_quote(worker_name)}")
        cursor.execute(f"CREATE DATABASE {_quote(worker_name)} TEMPLATE {_quote(template)}")
    yield
    with blocker.unblock():
        # pytest-django kept it (the kept-database path); drop it as it would have, and warn
        # as it does when that fails.
        try:
            connection.creation.destroy_test_db(original_name, verbosity=0, keepdb=False)
        except Exception as exc:
            warnings.warn(f"could not drop the test database {worker_name}: {exc!r}", stacklevel=1)


def drop_template(config: pytest.Config) -> None:
    """The controller, after every worker ended: the run's template is dropped."""
    import psycopg
    from django.conf import settings

    settings_dict = settings.DATABASES["default"]  # the controller never points it elsewhere
    with psycopg.connect(
        host=settings_dict.get("HOST") or None,
        port=settings_dict.get("PORT") or None,
        user=settings_dict.get("USER") or None,
        password=settings_dict.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    ) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {_quote(TEMPLATE)}")

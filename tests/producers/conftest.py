"""The producers' recipes, run: openlineage-python from the dev extra (an ordinary test),
dbt-ol (test_dbt_ol.py) and Apache Airflow with its OpenLineage provider (test_airflow.py)
installed from PyPI in cached virtualenvs.

The dbt-ol and Airflow harnesses are marked ``slow`` and left out of the default selection
(pyproject.toml's ``-m "not slow"``): ``pytest -m slow tests/producers`` runs them
(docs/producers.md). Their virtualenvs live in .local/producer-venvs/ (git-ignored), one per
set of pins, and are built once.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from django.conf import settings

from tests.faults.processes import shipped_web_server

ROOT = Path(__file__).resolve().parents[2]
VENVS = ROOT / ".local" / "producer-venvs"
# Tried together on 2026-12-02 (docs/producers.md): they install side by side from PyPI.
DBT_PINS = ("dbt-core==1.10.23", "dbt-postgres==1.10.2", "openlineage-dbt==1.54.0")
# Tried together on 2026-12-02 (docs/producers.md): issue 31's versions. Airflow's published
# constraints file was not reachable, so what uv resolved for these four is kept beside them
# and installed with ``-c``: the same 149 packages on every machine.
AIRFLOW_PINS = (
    "apache-airflow==2.10.5",
    "apache-airflow-providers-openlineage==2.8.0",
    "apache-airflow-providers-postgres==6.4.1",
    "apache-airflow-providers-common-sql==1.29.0",
)
AIRFLOW_CONSTRAINTS = Path(__file__).resolve().parent / "airflow-constraints.txt"


def cached_venv(pins: tuple[str, ...], constraints: Path | None = None) -> Path:
    """A virtualenv holding exactly ``pins`` (within ``constraints``, a pip constraints
    file), built on first use and kept; a changed pin or constraint builds a new one."""
    key = "\n".join(pins) + ("\n" + constraints.read_text() if constraints else "")
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    venv = VENVS / f"{pins[0].split('==')[0]}-{digest}"
    stamp = venv / ".installed"
    if stamp.exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    VENVS.mkdir(parents=True, exist_ok=True)
    uv = ROOT / ".uv" / "bin" / "uv"  # `make` installs it; pip when it is not there
    install: list[str | Path]
    if uv.exists():
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, venv], check=True)
        install = [uv, "pip", "install", "-q", "--python", venv / "bin" / "python", *pins]
    else:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        install = [venv / "bin" / "python", "-m", "pip", "install", "-q", *pins]
    if constraints:
        install += ["-c", constraints]
    subprocess.run(install, check=True, timeout=600)
    stamp.write_text("\n".join(pins) + "\n")
    return venv


def on_test_database() -> str:
    """The name of the database Django is connected to, failing the test unless it is
    pytest-django's test database: a module fixture writes outside any test transaction
    and flushes after, which must never reach DATABASE_URL's own database."""
    from django.db import connection
    from django.db.backends.base.creation import TEST_DATABASE_PREFIX

    name = str(connection.settings_dict["NAME"])
    # setup_databases renames the connection's database to its TEST NAME or test_<NAME>.
    expected = (connection.settings_dict.get("TEST") or {}).get("NAME")
    if not (name == expected if expected else name.startswith(TEST_DATABASE_PREFIX)):
        pytest.fail(f"Not on the test database ({name}): mark the tests django_db.")
    return name


@pytest.fixture(scope="session")
def dbt_venv() -> Path:
    return cached_venv(DBT_PINS)


@pytest.fixture(scope="session")
def airflow_venv() -> Path:
    return cached_venv(AIRFLOW_PINS, AIRFLOW_CONSTRAINTS)


@pytest.fixture(scope="module")
def server(django_db_setup: None) -> Iterator[str]:
    """The shipped web server (granian, ``python -m config.server``) on the test database,
    for the whole module: the producer's HTTP transport posts to it as to a deployed catalog."""
    with shipped_web_server(start_seconds=90) as url:
        yield url


@pytest.fixture(scope="module")
def scratch_database(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """A fresh PostgreSQL database for dbt to build in, beside the test database."""
    with scratch_postgres("dbt", django_db_blocker) as name:
        yield name


@pytest.fixture(scope="module")
def airflow_scratch_database(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """A fresh PostgreSQL database for the Airflow DAGs' SQL tasks."""
    with scratch_postgres("airflow", django_db_blocker) as name:
        yield name


@contextmanager
def scratch_postgres(producer: str, django_db_blocker: Any) -> Iterator[str]:
    """``<test db>_<producer>_scratch``, created empty and dropped afterwards; only beside
    pytest-django's test database (``on_test_database``)."""
    with django_db_blocker.unblock():
        on_test_database()
    parts = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"))
    name = f"{settings.DATABASES['default']['NAME']}_{producer}_scratch"
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

"""`make test` runs pytest on several xdist workers (ADR 0075): each worker gets a Redis
database of its own, as pytest-django gives it a PostgreSQL test database of its own, so
one worker's queued tasks and waiting-task marker are never seen by another."""

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.settings.test import worker_redis_url
from tests import worker_database
from tests.file_schedule import LongestFileFirst, costliest, load_seconds
from tests.worker_database import template_name


def test_the_first_worker_keeps_the_database_and_each_next_takes_the_one_below() -> None:
    url = "redis://127.0.0.1:6379/15"
    assert worker_redis_url(url, "gw0") == url
    assert worker_redis_url(url, "gw1") == "redis://127.0.0.1:6379/14"
    assert worker_redis_url("redis://:pw@host:6380/6", "gw3") == "redis://:pw@host:6380/3"


@pytest.mark.parametrize("worker", [None, "", "master"])
def test_outside_a_worker_the_url_is_used_as_it_is(worker: str | None) -> None:
    assert worker_redis_url("redis://127.0.0.1:6379/15", worker) == "redis://127.0.0.1:6379/15"


def test_more_workers_than_databases_below_is_a_clear_error() -> None:
    with pytest.raises(ImproperlyConfigured, match="gw2 has no Redis database below db 1"):
        worker_redis_url("redis://127.0.0.1:6379/1", "gw2")
    with pytest.raises(ImproperlyConfigured, match="below db 0"):
        worker_redis_url("redis://127.0.0.1:6379", "gw1")


def test_this_run_uses_its_workers_database_for_the_broker() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    expected = worker_redis_url(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15", worker)
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL == expected


# The longest files first (tests/file_schedule.py, ADR 0108).


class _Node:
    """What xdist's scheduler calls on a worker: the indexes it is sent to run."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[list[int]] = []

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_longest_recorded_files_are_handed_out_first() -> None:
    collection = [
        *(f"tests/many.py::test_{n}" for n in range(5)),  # most tests, 1 s: stock xdist's first
        "tests/long.py::test_one",  # 60 s
        *(f"tests/new.py::test_{n}" for n in range(30)),  # not recorded: 30 x 0.1 s
        "tests/middle.py::test_a",  # 20 s
        "tests/middle.py::test_b",
    ]
    seconds = {"tests/many.py": 1.0, "tests/long.py": 60.0, "tests/middle.py": 20.0}
    config = SimpleNamespace(
        getvalue=lambda name: {"tx": ["2*popen"], "dist": "loadfile"}[name],
        option=SimpleNamespace(loadscopereorder=True),
    )
    scheduler = LongestFileFirst(config, None, seconds)
    first, second = _Node("gw0"), _Node("gw1")
    for node in (first, second):
        scheduler.add_node(node)
        scheduler.add_node_collection(node, collection)
    scheduler.schedule()

    def files(node: _Node) -> list[str]:
        return [collection[batch[0]].split("::")[0] for batch in node.sent]

    # Each worker's first file is one of the two longest. Each is sent one more file at once
    # (it runs a test only when it knows the next); behind 60 s or 20 s of tests that is the
    # shortest waiting file, not the next longest.
    assert files(first) == ["tests/long.py", "tests/many.py"]
    assert files(second) == ["tests/middle.py", "tests/new.py"]


def test_a_file_not_recorded_is_estimated_from_its_tests() -> None:
    tests = {"a.py": 40, "b.py": 3}
    assert costliest(["a.py", "b.py"], tests, {"b.py": 2.0}) == "a.py"  # 40 x 0.1 s
    assert costliest(["a.py", "b.py"], tests, {"b.py": 5.0}) == "b.py"
    assert costliest(["a.py", "b.py"], {}, {}) == "a.py"  # a tie keeps the queue's order


def test_the_recorded_table_is_read_and_a_broken_one_is_ignored(tmp_path: Path) -> None:
    table = tmp_path / "seconds.json"
    table.write_text('{"tests/a.py": 3.5}')
    assert load_seconds(table) == {"tests/a.py": 3.5}
    table.write_text("[1, 2]")
    assert load_seconds(table) == {}
    assert load_seconds(tmp_path / "missing.json") == {}
    assert all(value >= 0 for value in load_seconds().values())  # the committed table reads


# Each worker's test database is a copy of the run's migrated template (ADR 0108).


def test_the_template_is_named_after_the_database_of_database_url() -> None:
    # Two checkouts on other DATABASE_URL names never share (or drop) one another's template.
    assert template_name({"NAME": "lc_one"}) == "test_lc_one_template"
    assert template_name({"NAME": "lc_two"}) != template_name({"NAME": "lc_one"})


def test_this_workers_database_is_a_copy_of_the_runs_template(
    request: pytest.FixtureRequest, db: None
) -> None:
    from django.db import connection

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = connection.settings_dict["NAME"]  # the database the tests use
    with connection.cursor() as cursor:
        # pg_database is shared: read without connecting to the template, which a
        # connection would keep other workers from copying.
        cursor.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            [name.removesuffix(f"_{worker}") + "_template"],
        )
        template = cursor.fetchone()
    if worker_database.applies(request.config):
        assert name == settings.DATABASES["default"]["TEST"]["NAME"]
        assert name.startswith("test_") and name.endswith(f"_{worker}")
        assert template == (request.config.workerinput["testrunuid"],)  # type: ignore[attr-defined]
    else:  # outside xdist, or --reuse-db and the like: pytest-django's own database
        assert name.startswith("test_")
        assert template is None

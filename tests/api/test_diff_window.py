"""docs/api.md: ``/lineage/diff?from=T1&to=T2`` compares the graph as of T1 with the graph as
of T2, and "removed means the job ran in (T1, T2] and no longer read or wrote that dataset".
The window's ends, end to end (ingested, derived, read over HTTP): a run at T1 itself is
not in it, a run at T2 is, and a job that did not run in it removes nothing."""

import uuid
from urllib.parse import quote

import pytest

from catalog.models import Dataset, Job
from tests.api.project_fixtures import derive
from tests.catalog.conftest import at, dataset, run_event

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
JOB = ("etl", "load")
FIRST, SECOND = (str(uuid.UUID(int=n)) for n in (900, 901))


@pytest.fixture
def moved() -> dict[str, str]:
    """The job reads ``a`` and writes ``b`` at 0 s; at 100 s it writes ``c`` instead."""
    a, b, c = (dataset(NS, name) for name in "abc")
    derive(
        run_event("COMPLETE", 0, FIRST, JOB, [a], [b]),
        run_event("COMPLETE", 100, SECOND, JOB, [a], [c]),
    )
    job = Job.objects.get(name="load").id
    ids = {d.name: d.id for d in Dataset.objects.all()}
    return {
        "node": f"dataset:{ids['a']}",
        "b": f"job:{job}->dataset:{ids['b']}",
        "c": f"job:{job}->dataset:{ids['c']}",
    }


def _diff(api, moved, start: float, end: float) -> tuple[list[str], list[str]]:
    response = api.get(
        f"/api/v1/lineage/diff?node={moved['node']}&from={quote(at(start))}&to={quote(at(end))}"
    )
    assert response.status_code == 200, response.content
    edges = response.json()["edges"]
    return [e["id"] for e in edges["added"]], [e["id"] for e in edges["removed"]]


def test_a_run_inside_the_window_adds_and_removes(api, moved) -> None:
    assert _diff(api, moved, 50, 100) == ([moved["c"]], [moved["b"]])  # at T2: inside
    assert _diff(api, moved, 99.999, 200) == ([moved["c"]], [moved["b"]])


def test_a_run_at_the_window_start_or_after_its_end_changes_nothing(api, moved) -> None:
    assert _diff(api, moved, 100, 200) == ([], [])  # at T1: the graph as of T1 has it
    assert _diff(api, moved, 50, 99.999) == ([], [])  # after T2: not known yet
    assert _diff(api, moved, 0, 0) == ([], [])

"""An unfiltered run list reads its pages from statements the ORM compiled once per page
shape (api.keyset_rows, ADR 0123): the same rows as the ORM's page, the same answers."""

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from api import keyset_rows
from api.keyset_rows import KeysetRows
from api.views import catalog as views
from catalog.models import Run
from tests.api.factories import T0, make_job, make_run


@pytest.fixture
def runs() -> list[Run]:
    """Seven runs of two jobs: a parent and a child, ended and running, tags, a runId that
    is no UUID: every column the rows convert."""
    first, second = make_job("load"), make_job("export")
    made = [
        make_run(first if index % 2 else second, started=T0 + timedelta(hours=index))
        for index in range(6)
    ]
    made[2].ended_at = made[2].started_at + timedelta(minutes=3)
    made[2].tags = [{"key": "team", "value": "core", "source": "steward"}]
    made[2].save()
    child = make_run(first, parent_run=made[1])
    Run.objects.filter(id=child.id).update(run_id_text="manual__2026-01-01")
    made.append(child)
    return made


def _orm_page(
    queryset: Any, ordering: tuple[str, ...], lookup: Any, position: Any, bounds: slice
) -> list[dict[str, Any]]:
    page = queryset.order_by(*ordering)
    if lookup is not None:
        page = page.filter(**{f"{lookup[0]}__{lookup[1]}": position})
    return list(page[bounds])


@pytest.mark.django_db
@pytest.mark.parametrize("ordering", [("-id",), ("id",)])
@pytest.mark.parametrize("comparison", [None, "lt", "gt"])
@pytest.mark.parametrize("bounds", [slice(0, 3), slice(0, 51), slice(2, 5)])
def test_every_shape_reads_the_orms_rows(
    runs: list[Run], ordering: tuple[str, ...], comparison: str | None, bounds: slice
) -> None:
    kept = KeysetRows(views.RUN_ROWS)
    middle = sorted(run.id for run in runs)[3]
    lookup = None if comparison is None else ("id", comparison)
    position = None if comparison is None else middle
    expected = _orm_page(views.RUN_ROWS, ordering, lookup, position, bounds)
    assert expected or comparison is not None
    for _ in range(2):  # compiled, then kept
        page = kept.shape().order_by(*ordering)
        if comparison is not None:
            page = page.filter(**{f"id__{comparison}": str(middle)})
        assert page[bounds] == expected
    assert len(kept._statements) == 1


@pytest.mark.django_db
def test_unfiltered_pages_are_served_as_the_orms_both_ways(
    api: Client, runs: list[Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Walked forwards then backwards with two runs a page: byte for byte what the run list
    served from the ORM's compilation on every request (``RUN_PAGES`` off)."""

    def walk() -> list[bytes]:
        bodies, url = [], "/api/v1/runs?limit=2"
        while url:
            response = api.get(url)
            assert response.status_code == 200, response.content
            bodies.append(response.content)
            url = response.json()["next"]
        url = response.json()["previous"]
        while url:
            response = api.get(url)
            bodies.append(response.content)
            url = response.json()["previous"]
        return bodies

    kept = walk()
    monkeypatch.setattr(views, "RUN_PAGES", None)
    assert walk() == kept
    assert len(kept) == 7  # four pages forwards, three back


@pytest.mark.django_db
def test_a_kept_page_is_one_statement_and_compiles_nothing(api: Client, runs: list[Run]) -> None:
    api.get("/api/v1/runs?limit=2")
    next_link = api.get("/api/v1/runs?limit=2").json()["next"]
    api.get(next_link)
    shapes = dict(views.RUN_PAGES._statements)
    with CaptureQueriesContext(connection) as queries:
        assert api.get(next_link).status_code == 200
    assert len(queries) == 1
    assert views.RUN_PAGES._statements == shapes


@pytest.mark.django_db
def test_a_filtered_list_and_a_forged_cursor_are_answered_as_before(
    api: Client, runs: list[Run]
) -> None:
    states = {item["state"] for item in api.get("/api/v1/runs?state=FAIL").json()["results"]}
    assert states == set()
    assert len(api.get("/api/v1/runs?state=COMPLETE").json()["results"]) == 7
    # p=abc, as base64: checked against the id column before any statement
    forged = api.get("/api/v1/runs?cursor=cD1hYmM%3D")
    assert forged.status_code == 400
    assert forged.json()["type"].endswith("invalid-cursor")


def test_a_shape_filters_by_one_position_only() -> None:
    shape = KeysetRows(views.RUN_ROWS).shape()
    with pytest.raises(ValueError):
        shape.filter(id__in=[1, 2])
    with pytest.raises(ValueError):
        shape.filter(id__lt=1, job_id__lt=2)


@pytest.mark.django_db
def test_the_kept_shapes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyset_rows, "MAX_SHAPES", 3)
    kept = KeysetRows(views.RUN_ROWS)
    for offset in range(5):
        kept.shape().order_by("-id")[offset : offset + 2]
    assert list(kept._statements) == [(("-id",), None, offset, offset + 2) for offset in (2, 3, 4)]

"""The read lists' filter backend builds no filterset for a request that names none of its
filters (api.filters.FilterBackend, ADR 0119): what every filterset gives without a filter
is what its ``unasked`` says, and a request that names one builds it as before."""

from typing import Any

import pytest
from django.http import QueryDict
from django.test import Client, RequestFactory
from django_filters import FilterSet

from api import filters
from api.filters import CatalogFilterSet, FilterBackend, names_a_filter
from catalog.models import Dataset, RetiredKind, Retirement
from tests.api.conftest import results
from tests.api.factories import make_dataset


def _filtersets() -> list[type[CatalogFilterSet]]:
    found: list[type[CatalogFilterSet]] = []
    waiting: list[type[Any]] = [CatalogFilterSet]
    while waiting:
        for subclass in waiting.pop().__subclasses__():
            waiting.append(subclass)
            if subclass.__module__ == filters.__name__ and subclass._meta.model is not None:
                found.append(subclass)
    return found


def test_every_filterset_is_found() -> None:
    names = {filterset.__name__ for filterset in _filtersets()}
    assert {"JobFilterSet", "DatasetFilterSet", "RunFilterSet", "EventFilterSet"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("filterset_class", _filtersets(), ids=lambda cls: cls.__name__)
def test_unasked_is_the_filtersets_answer_without_a_filter(
    filterset_class: type[CatalogFilterSet],
) -> None:
    """The promise ``unasked`` makes, for every filterset of the read API: the same SQL as
    the filterset bound to a request without any of its parameters (so a filterset that
    does more without a filter, or has a required one, fails here until it says so)."""
    request = RequestFactory().get("/api/v1/x", {"cursor": "cD0x", "limit": "5"})
    model = filterset_class._meta.model
    built = filterset_class(
        data=QueryDict("cursor=cD0x&limit=5"), queryset=model.objects.all(), request=request
    )
    assert built.is_valid(), built.errors
    assert str(built.qs.query) == str(filterset_class.unasked(model.objects.all()).query)


def test_a_parameter_named_like_a_filter_builds_it() -> None:
    run_filters = filters.RunFilterSet
    assert not names_a_filter(QueryDict("cursor=x&limit=3"), run_filters)
    assert not names_a_filter(QueryDict(""), run_filters)
    assert names_a_filter(QueryDict("state=COMPLETE"), run_filters)
    assert names_a_filter(QueryDict("limit=3&job_id=x"), run_filters)
    # A range widget's suffixed names start with its filter's: built, never skipped.
    assert names_a_filter(QueryDict("started_since_min=x"), run_filters)


@pytest.mark.django_db
def test_no_filterset_is_built_for_an_unfiltered_page(
    api: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[type[FilterSet]] = []
    original = FilterSet.__init__

    def counting(self: FilterSet, *args: Any, **kwargs: Any) -> None:
        built.append(type(self))
        original(self, *args, **kwargs)

    monkeypatch.setattr(FilterSet, "__init__", counting)
    for path in ("/api/v1/runs?limit=2", "/api/v1/datasets", "/api/v1/jobs?limit=1"):
        assert api.get(path).status_code == 200
    assert built == []
    assert api.get("/api/v1/runs?limit=2&state=COMPLETE").status_code == 200
    assert built == [filters.RunFilterSet]
    # A filter's validation is unchanged: a bad value is still the filterset's 400.
    assert api.get("/api/v1/runs?job_id=abc").status_code == 400


@pytest.mark.django_db
def test_unfiltered_lists_still_hide_what_is_retired(api: Client) -> None:
    kept, gone = make_dataset("kept", "ns"), make_dataset("gone", "ns")
    Retirement.objects.create(
        kind=RetiredKind.DATASET,
        object_id=gone.id,
        namespace="ns",
        retired_at="2026-01-01T00:00:00Z",
        retired_by="steward",
    )
    assert [item["id"] for item in results(api.get("/api/v1/datasets?limit=10"))] == [kept.id]
    assert Dataset.objects.count() == 2


def test_the_read_views_use_the_backend() -> None:
    from api.base import ReadOnlyViewSet
    from api.views.catalog import JobRunList

    assert ReadOnlyViewSet.filter_backends == [FilterBackend]
    assert JobRunList.filter_backends == [FilterBackend]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "",
        "job_id=3",
        "job_namespace=a&job_name=b",
        "state=COMPLETE&state=FAIL",
        "started_since=2026-01-01T00:00:00Z&started_until=2026-02-01T00:00:00Z",
        "parent_run_id=3f1d2c4e-0000-4000-8000-000000000001",
        "is_streaming=true",
    ],
)
def test_the_run_lists_rows_built_once_filter_to_the_same_sql(query: str) -> None:
    """The run lists read RUN_ROWS (the rows queryset, built once) and filter it; before,
    they filtered the model's queryset and took its rows after: the same statement."""
    from api.views.catalog import RUN_ROWS
    from catalog.models import Run

    request = RequestFactory().get(f"/api/v1/runs?{query}")
    data = QueryDict(query)

    def filtered(queryset: Any) -> Any:
        built = filters.RunFilterSet(data=data, queryset=queryset, request=request)
        assert built.is_valid(), built.errors
        return built.qs.filter(job_id=7).order_by("-id")

    before = filtered(Run.objects.for_list()).list_rows()
    assert str(filtered(RUN_ROWS.all()).query) == str(before.query)

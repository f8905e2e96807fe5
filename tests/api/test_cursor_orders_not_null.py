"""Every cursor list of /api/v1 orders by columns that cannot be NULL (ADR 0160).

A cursor is a row's position in its list's order: ``<time>|<id>`` (api/tied_positions.py)
or one column's value. A row whose time is NULL has no position that can be written (its
``None|12`` is no time: the next page's request was a 400), nor one that ``time < t`` can
start from, so a list ordered by a nullable time could not be paged past its first NULL.
Runs are listed newest row first (``-id``), not by their nullable start, and the lists
ordered by a time (``/changes``, ``/metadata``) order by times every row has. Each list
of tests/api/test_every_list_paginated.py is read here once and the order its cursor
pagination applied is checked against its model's columns.
"""

from typing import Any

import pytest

from api.pagination import CursorPage
from tests.api.factories import make_dataset, make_job, make_run
from tests.api.test_every_list_paginated import LISTS

pytestmark = pytest.mark.django_db


def test_every_cursor_list_orders_by_columns_that_have_a_value(api, monkeypatch) -> None:
    applied: dict[str, tuple[Any, tuple[str, ...]]] = {}
    paginate = CursorPage.paginate_queryset

    def recorded(page: CursorPage, queryset: Any, request: Any, view: Any = None) -> Any:
        ordering = page.get_ordering(request, queryset, view)
        applied[request.path] = (queryset.model, ordering)
        return paginate(page, queryset, request, view)

    monkeypatch.setattr(CursorPage, "paginate_queryset", recorded)
    job = make_job()
    dataset = make_dataset("shop.public.orders")
    run = make_run(job)
    for url in LISTS.values():
        response = api.get(url.format(job=job.id, dataset=dataset.id, run=run.run_uuid))
        assert response.status_code == 200, (url, response.content[:300])
    assert len(applied) >= 6, applied  # jobs, a job's runs, runs, datasets, events, ...
    nullable = {
        path: term
        for path, (model, ordering) in applied.items()
        for term in ordering
        if model._meta.get_field(term.removeprefix("-")).null
    }
    assert nullable == {}, nullable

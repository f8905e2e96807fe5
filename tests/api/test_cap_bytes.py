"""A cursor page is cut to ``MAX_PAGE_BYTES`` of items; a page that fits is written once to
tell (api.pagination.CursorPage.cap_bytes, ADR 0123). Around the bound, the items kept are
what counting them one by one keeps."""

from typing import Any

import orjson
import pytest
from django.conf import settings

from api.pagination import CursorPage

ITEMS = [{"id": 10 - number, "name": "x" * (number * 7)} for number in range(6)]


def _one_by_one(items: list[dict[str, Any]], budget: int) -> int:
    total = kept = 0
    for item in items:
        total += len(orjson.dumps(item))
        if kept and total > budget:
            break
        kept += 1
    return kept


def _page() -> CursorPage:
    page = CursorPage()
    page.cursor, page.page, page.ordering, page.has_next = None, list(ITEMS), ("-id",), False
    return page


@pytest.mark.parametrize("slack", range(-8, 9))
@pytest.mark.parametrize("size", ["items", "page"])
def test_the_items_kept_near_the_bound(
    monkeypatch: pytest.MonkeyPatch, slack: int, size: str
) -> None:
    items = sum(len(orjson.dumps(item)) for item in ITEMS)
    budget = (items if size == "items" else len(orjson.dumps(ITEMS))) + slack
    monkeypatch.setitem(settings.LINEAGE, "MAX_PAGE_BYTES", budget)
    page = _page()
    kept = page.cap_bytes(ITEMS)
    assert len(kept) == _one_by_one(ITEMS, budget)
    if len(kept) < len(ITEMS):
        assert page.has_next and page.next_position == str(ITEMS[len(kept)]["id"])
    else:
        assert kept is ITEMS and not page.has_next

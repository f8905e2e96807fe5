"""List items built from rows (api.list_rows) are their serializer's items, byte for byte."""

import json

import pytest

from api.list_rows import run_item
from api.serializers import RunSerializer
from catalog.models import Run
from core.rendering import JSONRenderer
from tests.api import reads_snapshot_store

pytestmark = pytest.mark.django_db


def test_a_run_item_is_the_serializers_item():
    # Every run of the store: failed with errors, running without an end, with parents,
    # nominal times, tags and a runId that is not a UUID.
    reads_snapshot_store.build()
    runs = Run.objects.order_by("-id")
    served = [run_item(row) for row in runs.list_rows()]
    serialized = RunSerializer(runs.for_list(), many=True).data
    assert len(served) == 300
    assert [list(item) for item in served] == [list(RunSerializer.Meta.fields)] * 300
    render = JSONRenderer().render
    assert render(served) == render(serialized)
    assert any(item["parent_run_id"] for item in served)
    assert any(item["tags"] for item in served)
    assert any(item["ended_at"] is None for item in served)


def test_a_search_page_is_the_serializers_document(api):
    from api.views.search import SearchPageSerializer
    from catalog.reads.search import search_catalog

    reads_snapshot_store.build()
    served = api.get("/api/v1/search?q=table_1&limit=5").content
    hits = search_catalog("table_1", 6)
    assert len(hits) == 6
    page = {
        "next": json.loads(served)["next"],  # the link itself: the snapshot test's
        "previous": None,
        "results": hits[:5],
    }
    assert served == JSONRenderer().render(SearchPageSerializer(page).data)

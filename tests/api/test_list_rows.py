"""List items built from rows (api.list_rows) are their serializer's items, byte for byte."""

import json

import pytest

from api.list_rows import run_item, run_link_item
from api.run_serializers import RunDatasetSerializer
from api.serializers import RunSerializer
from catalog.models import Run, RunDataset
from catalog.reads.runs import link_rows
from core.rendering import JSONRenderer
from tests.api import reads_snapshot_store
from tests.api.factories import T0, make_dataset, make_job, make_run

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


def test_a_dataset_detail_is_the_serializers_document(api):
    # Every dataset of the store the API shows: aliases from symlinks and rules, fields,
    # redacted facets, hidden tags, column lineage, run facts (ADR 0110).
    from api.serializers import DatasetDetailSerializer
    from catalog.models import Dataset
    from catalog.reads import run_facts

    reads_snapshot_store.build_with_a_rule()
    render = JSONRenderer().render
    shown, named_by_rule = 0, False
    for dataset in Dataset.objects.with_names(detail=True).with_retirement().order_by("id"):
        served = api.get(f"/api/v1/datasets/{dataset.id}")
        if served.status_code == 404:  # retired
            continue
        document = json.loads(served.content)
        # The related lists are read by the same statements either way: handed over as served.
        context = {
            "producing": document["producing_jobs"],
            "attempting": document["attempting_jobs"],
            "consuming": document["consuming_jobs"],
            "column_lineage": document["column_lineage"],
            "column_lineage_outside_schema": document["column_lineage_outside_schema"],
            "dataset_dependencies": document["dataset_dependencies"],
            "run_facts": run_facts.of_dataset([a.id for a in dataset.prefetched_aliases]),
            "aliases_url": f"http://testserver/api/v1/datasets/{dataset.id}/aliases",
        }
        serialized = DatasetDetailSerializer(dataset, context=context).data
        assert served.content == render(serialized), dataset.id
        assert list(document) == list(DatasetDetailSerializer.Meta.fields)
        shown += 1
        named_by_rule = named_by_rule or any(a["reason_rule"] for a in document["aliases"])
    assert shown > 40 and named_by_rule


@pytest.mark.parametrize(("state", "confirmed"), [("COMPLETE", True), ("FAIL", False)])
def test_a_run_link_item_is_the_serializers_item(state, confirmed):
    """/runs/{runId}/inputs and /outputs build their items from rows (ADR 0186): the same
    bytes as RunDatasetSerializer, the detail's, for an input, a confirmed and an unconfirmed
    output and an alias whose dataset is gone (null)."""
    run = make_run(make_job("links"), state=state, outputs_confirmed=confirmed)
    kept, gone = make_dataset("shop.public.kept"), make_dataset("shop.public.gone")
    gone_alias = gone.aliases.get()
    gone_alias.dataset = None
    gone_alias.save()
    for alias, direction, named in (
        (kept.aliases.get(), "input", False),
        (kept.aliases.get(), "output", True),
        (gone_alias, "output", False),
    ):
        RunDataset.objects.create(
            run=run,
            alias=alias,
            direction=direction,
            first_seen=T0,
            last_seen=T0,
            confirmed=named,
        )
    render = JSONRenderer().render
    for direction in ("input", "output"):
        rows = list(link_rows(run.id, direction).order_by("id"))
        served = [run_link_item(run, row) for row in rows]
        links = list(RunDataset.objects.filter(run=run, direction=direction).order_by("id"))
        serialized = RunDatasetSerializer(links, many=True, context={"run": run}).data
        assert render(served) == render(serialized)
    assert {item["dataset"] is None for item in served} == {True, False}
    assert {item["attempted"] for item in served} == ({False, True} if confirmed else {True})

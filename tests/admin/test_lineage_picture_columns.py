"""The admin picture's column level reads the one column-lineage model (ADR 0060): it draws
dataset-level dependencies (field → whole dataset), greys the edges a job's latest
completed run no longer produced, and dots inputs only the column lineage named."""

import uuid

import orjson
import pytest

from catalog.lineage import graph
from catalog.lineage.request import NodeRef
from catalog.models import Dataset
from catalog.picture.build import Controls, build_picture
from catalog.picture.layout import layout
from catalog.picture.svg import render_svg
from catalog.services.derive import derive_events
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.conftest import CORPUS

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"


def draw(target: Dataset) -> tuple[object, str]:
    drawn = build_picture(
        NodeRef("dataset", target.id), Controls(depth=1, columns=True), lambda e: "", graph
    )
    return drawn, str(render_svg(drawn, layout(drawn), "test"))


def test_dataset_level_dependencies_are_drawn_to_the_dataset() -> None:
    event = orjson.loads((CORPUS / "written/hive_cte_joins_dataset_dependencies.json").read_bytes())
    derive_events(store([openlineage(event)]))
    target = Dataset.objects.for_alias("hive://localhost:9083", "test.xxx").get()
    drawn, svg = draw(target)
    dependencies = [e for e in drawn.column_edges if not e.target_field]  # type: ignore[attr-defined]
    assert len(dependencies) == 7
    assert {e.transformation for e in dependencies} >= {"INDIRECT SORT", "INDIRECT JOIN"}
    assert svg.count("lc-dependency") == 7
    assert "the whole dataset (INDIRECT GROUP_BY)" in svg
    # test.t3 is named only by the column lineage: its input edge is dotted.
    assert svg.count("lc-via-column-lineage") == 1


def test_stale_table_and_column_edges_are_greyed() -> None:
    job = ("etl", "report")
    both = facet(
        fields={
            "total": {"inputFields": [{"namespace": NS, "name": "orders", "field": "amount"}]},
            "who": {"inputFields": [{"namespace": NS, "name": "people", "field": "name"}]},
        }
    )
    one = facet(fields={"total": both["fields"]["total"]})
    first, second = str(uuid.UUID(int=201)), str(uuid.UUID(int=202))
    events = [
        run_event(
            "COMPLETE",
            0,
            first,
            job,
            [dataset(NS, "orders")],
            [dataset(NS, "report", columnLineage=both)],
        ),
        run_event("START", 100, second, job, [dataset(NS, "orders")]),
        run_event(
            "COMPLETE",
            110,
            second,
            job,
            [dataset(NS, "orders")],
            [dataset(NS, "report", columnLineage=one)],
        ),
    ]
    derive_events(store([openlineage(event) for event in events]))
    drawn, svg = draw(Dataset.objects.for_alias(NS, "report").get())
    stale = {(e.source, e.kind) for e in drawn.edges if not e.current}  # type: ignore[attr-defined]
    people = Dataset.objects.for_alias(NS, "people").get()
    assert stale == {(f"dataset:{people.id}", "input")}
    assert [e.source_field for e in drawn.column_edges if not e.current] == ["name"]  # type: ignore[attr-defined]
    assert svg.count("lc-stale") == 2
    assert "not in the job&#x27;s latest completed run" in svg or "not in the job's latest" in svg

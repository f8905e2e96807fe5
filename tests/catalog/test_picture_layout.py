"""The lineage picture's pure layout (catalog/picture/): edges outside a cycle point right,
the layers stay bounded, and every label fits its box (issue 39, a laptop's width)."""

import itertools
from pathlib import Path

import orjson
import pytest

from catalog.lineage import graph as lineage_reads
from catalog.lineage.request import NodeRef
from catalog.models import Job
from catalog.picture.build import Controls, PictureEdge, PictureInput, PictureNode, build_picture
from catalog.picture.geometry import (
    DATASET_WIDTH,
    JOB_WIDTH,
    MAX_LAYER_SPAN,
    fit_text,
    strongly_connected,
    text_width,
)
from catalog.picture.layout import layers, layout
from catalog.picture.svg import render_svg
from catalog.services.derive import derive_events
from tests.catalog.helpers import openlineage, store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage"
DBT = FIXTURES / "written" / "dbt_default_mode_seeds_staging_marts.json"
AIRFLOW = FIXTURES / "airflow-2.10.5" / "lc_shop_sql.jsonl"


def _picture(focus: str, edges: list[tuple[str, str, str]]) -> PictureInput:
    drawn = PictureInput(focus=focus)
    for ref in dict.fromkeys(ref for source, target, _ in edges for ref in (source, target)):
        drawn.nodes[ref] = PictureNode(ref, ref.split(":")[0], ref, focused=ref == focus)
    drawn.edges = [PictureEdge(source, target, kind) for source, target, kind in edges]
    return drawn


def _pairs(drawn: PictureInput) -> dict[tuple[str, str], None]:
    return {(edge.source, edge.target): None for edge in drawn.edges}


def _backward(drawn: PictureInput, rank: dict[str, int]) -> list[tuple[str, str]]:
    return [(e.source, e.target) for e in drawn.edges if rank[e.source] >= rank[e.target]]


def test_a_dbt_runs_models_are_drawn_in_the_order_they_feed_each_other() -> None:
    # The shape of a dbt run's page: the run is the parent of every model; raw models write
    # the tables the staging models read. By hops alone every model and every table was one
    # or two hops from the run, so staging's reads pointed left with no cycle.
    drawn = _picture(
        "job:run",
        [
            ("job:run", "job:raw", "parent"),
            ("job:run", "job:stg", "parent"),
            ("job:run", "job:mart", "parent"),
            ("job:raw", "dataset:raw", "output"),
            ("dataset:raw", "job:stg", "input"),
            ("job:stg", "dataset:stg", "output"),
            ("dataset:stg", "job:mart", "input"),
            ("job:mart", "dataset:mart", "output"),
        ],
    )
    rank = layers(drawn, _pairs(drawn))
    assert rank["job:run"] == 0
    assert _backward(drawn, rank) == []
    placed = layout(drawn)
    assert placed.mode == "layered"
    for edge in drawn.edges:
        assert placed.boxes[edge.source].x < placed.boxes[edge.target].x, edge


def test_upstream_chains_are_stretched_to_the_left_of_the_focus() -> None:
    # The focus reads a and b; a is also upstream of b: a goes left of b, not beside it.
    drawn = _picture(
        "job:focus",
        [
            ("dataset:a", "job:focus", "input"),
            ("dataset:b", "job:focus", "input"),
            ("dataset:a", "job:copy", "input"),
            ("job:copy", "dataset:b", "output"),
        ],
    )
    rank = layers(drawn, _pairs(drawn))
    assert rank["job:focus"] == 0 and rank["dataset:b"] == -1
    assert rank["job:copy"] == -2 and rank["dataset:a"] == -3
    assert _backward(drawn, rank) == []


def test_a_cycle_keeps_its_hops_and_a_long_chain_stays_bounded() -> None:
    # A cycle (job:1 <-> dataset:2) is drawn by hops, with its back edge against the flow.
    cyclic = _picture(
        "dataset:0",
        [
            ("dataset:0", "job:1", "input"),
            ("job:1", "dataset:2", "output"),
            ("dataset:2", "job:1", "input"),
        ],
    )
    assert layers(cyclic, _pairs(cyclic)) == {"dataset:0": 0, "job:1": 1, "dataset:2": 2}
    # Every node of a 60-long chain is one hop from the focus: the chain is stretched, but
    # never past MAX_LAYER_SPAN layers.
    chain = [f"dataset:{index}" for index in range(1, 61)]
    edges = [("dataset:0", ref, "copies") for ref in chain]
    edges += [(a, b, "copies") for a, b in itertools.pairwise(chain)]
    drawn = _picture("dataset:0", edges)
    rank = layers(drawn, _pairs(drawn))
    assert max(rank.values()) == MAX_LAYER_SPAN
    assert [rank[ref] for ref in chain[:MAX_LAYER_SPAN]] == list(range(1, MAX_LAYER_SPAN + 1))
    placed = layout(drawn)  # the bound leaves flat edges: drawn in columns, not refused
    assert placed.mode == "columns" and set(placed.boxes) == set(drawn.nodes)


def test_components_of_a_long_chain_are_found_without_recursion() -> None:
    refs = [f"dataset:{index}" for index in range(5000)]
    forward = {a: [b] for a, b in itertools.pairwise(refs)}
    forward[refs[-1]] = [refs[-3]]  # the last three are a cycle
    component = strongly_connected(refs, forward)
    assert len(set(component.values())) == len(refs) - 2
    assert component[refs[-1]] == component[refs[-2]] == component[refs[-3]]


def test_a_long_label_is_cut_at_its_start_to_fit_its_box() -> None:
    name = "…ility_test.customer_analytics"
    fitted = fit_text(name, JOB_WIDTH - 32, 12, bold=True)
    assert fitted != name and fitted.startswith("…") and name.endswith(fitted[1:])
    assert text_width(fitted, 12, bold=True) <= JOB_WIDTH - 32
    assert fit_text("orders", DATASET_WIDTH - 20, 12, bold=True) == "orders"
    # Wide letters (m, w, capitals) make a shorter fit than narrow ones.
    assert len(fit_text("m" * 40, 180, 12)) < len(fit_text("i" * 40, 180, 12))


def test_the_svg_draws_every_label_fitted_and_keeps_the_full_name_in_the_tooltip() -> None:
    drawn = _picture("job:dbt.main.openlineage_compatibility_test.customer_analytics", [])
    ref = "job:dbt.main.openlineage_compatibility_test.customer_analytics"
    drawn.nodes[ref] = PictureNode(
        ref, "job", ref[4:34], "openlineage_compatibility_test", ref, focused=True
    )
    svg = str(render_svg(drawn, layout(drawn), "a job"))
    assert f"<title>{ref}</title>" in svg
    label = svg.split('class="lc-label">')[1].split("<")[0]
    assert label.startswith("…") and text_width(label, 12, bold=True) <= JOB_WIDTH - 32


def _load(path: Path) -> list[dict]:
    text = path.read_bytes()
    if path.suffix == ".jsonl":
        return [orjson.loads(line) for line in text.splitlines() if line.strip()]
    return orjson.loads(text)


@pytest.mark.django_db
def test_the_real_dbt_and_airflow_parents_draw_consumers_to_the_right() -> None:
    derive_events(store([openlineage(event) for event in _load(DBT) + _load(AIRFLOW)]))
    parents = Job.objects.filter(children__isnull=False).distinct()
    assert {job.namespace for job in parents} >= {"dbt", "airflow_harness"}
    for parent in parents:
        drawn = build_picture(
            NodeRef("job", parent.pk), Controls(), lambda _: "", lineage_reads, lambda _: ""
        )
        placed = layout(drawn)
        assert placed.mode == "layered" and len(drawn.nodes) > 5
        for edge in drawn.edges:
            source, target = placed.boxes[edge.source], placed.boxes[edge.target]
            assert source.x < target.x, (parent.name, edge)
        # Long edges bend around the boxes: the picture's extent covers every bend.
        for route in placed.routes:
            for x, y in route.points:
                assert 0 <= x <= placed.width and 0 <= y <= placed.height, (parent.name, route)

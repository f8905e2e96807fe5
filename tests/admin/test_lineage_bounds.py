"""The lineage picture's layout does bounded work whatever graph a producer planted
(issue 27, ADR 0057): layers are hops from the focus, above a size the picture is laid out
in columns with at most MAX_DRAWN_EDGES edges and says so, and grandalf's crossing passes
stop at their time budget. Time itself is measured by bench/admin.py --shapes, not here.
"""

import itertools
import random
import re
import uuid
from typing import Any

import pytest
from django.test import Client

import catalog.picture.layout as lineage_layout
from catalog.models import Dataset, Job
from catalog.picture.build import PictureEdge, PictureInput, PictureNode
from catalog.picture.geometry import LAYERED_LIMIT, MAX_DRAWN_EDGES
from catalog.picture.layout import layout
from tests.admin.conftest import ingest_and_derive, run_event

pytestmark = pytest.mark.django_db

NAMESPACE = "postgres://dense:5432"


def dense_events() -> list[dict[str, Any]]:
    """Issue 27's shape: 50 jobs over 50 datasets, each reading 10 and writing 10."""
    rng = random.Random(27)
    tables = [f"public.t{index:02}" for index in range(50)]
    events = []
    for job in range(50):
        picked = rng.sample(tables, 20)
        events.append(
            run_event(
                f"dense_job{job:02}",
                "COMPLETE",
                str(uuid.UUID(int=job + 1)),
                inputs=[(NAMESPACE, name) for name in picked[:10]],
                outputs=[(NAMESPACE, name) for name in picked[10:]],
            )
        )
    return events


def synthetic(datasets: int, jobs: int, per_job: int) -> PictureInput:
    """A random bipartite picture: each job reads and writes ``per_job // 2`` datasets."""
    rng = random.Random(57)
    drawn = PictureInput(focus="dataset:0")
    for index in range(datasets):
        ref = f"dataset:{index}"
        drawn.nodes[ref] = PictureNode(ref, "dataset", f"t{index}", focused=index == 0)
    for job in range(jobs):
        ref = f"job:{job}"
        drawn.nodes[ref] = PictureNode(ref, "job", f"j{job}")
        picked = rng.sample(range(datasets), per_job)
        for index in picked[: per_job // 2]:
            drawn.edges.append(PictureEdge(f"dataset:{index}", ref, "input"))
        for index in picked[per_job // 2 :]:
            drawn.edges.append(PictureEdge(ref, f"dataset:{index}", "output"))
    return drawn


def assert_no_overlap(placed: lineage_layout.Layout) -> None:
    for (a_ref, a), (b_ref, b) in itertools.combinations(placed.boxes.items(), 2):
        apart = a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
        assert apart, f"{a_ref} and {b_ref} overlap"


def test_the_dense_graph_page_draws_every_node_in_columns_and_says_so(
    ingest_client: Client, super_client: Client
) -> None:
    ingest_and_derive(ingest_client, dense_events())
    focus = Dataset.objects.get(namespace=NAMESPACE, name="public.t00")
    for path in (
        f"/admin/catalog/dataset/{focus.pk}/change/?lineage_depth=5",
        f"/admin/catalog/job/{Job.objects.get(name='dense_job00').pk}/change/",
        f"/admin/lineage/?node=dataset:{focus.pk}&lineage_depth=5",
    ):
        response = super_client.get(path)
        assert response.status_code == 200, path
        page = response.content.decode()
        assert 'data-layout="columns"' in page
        note = re.search(r'<p class="lc-note" id="lineage-layout-note">([^<]+)</p>', page)
        assert note and "too dense to lay out in layers" in note.group(1)
        assert f"{MAX_DRAWN_EDGES} pairs" in note.group(1) and "not drawn" in note.group(1)
        # Every dataset and job is drawn, linked to its page; the edges are bounded.
        nodes = re.findall(r'data-node="((?:dataset|job):\d+)"', page)
        assert len(nodes) == len(set(nodes)) == 100
        assert page.count('class="lc-edge ') == MAX_DRAWN_EDGES
        assert "50 dataset(s), 50 job(s)" in page


def test_a_dense_picture_is_laid_out_in_columns_without_overlap_or_crossing_passes() -> None:
    drawn = synthetic(100, 50, 20)  # 1,000 linked pairs
    placed = layout(drawn)
    assert placed.mode == "columns" and placed.pairs == 1000
    assert placed.ordering_steps == 0  # grandalf never ran
    assert len(placed.routes) == placed.pairs_drawn == MAX_DRAWN_EDGES
    assert all(len(route.points) == 2 for route in placed.routes)  # straight across
    assert set(placed.boxes) == set(drawn.nodes)
    assert_no_overlap(placed)
    # The focus's own edges are drawn first.
    focus_edges = {(e.source, e.target) for e in drawn.edges if "dataset:0" in (e.source, e.target)}
    assert focus_edges <= {(route.source, route.target) for route in placed.routes}


def test_markers_keep_their_edge_when_edges_are_cut() -> None:
    drawn = synthetic(100, 50, 20)
    drawn.nodes["more:dataset:7:downstream"] = PictureNode(
        "more:dataset:7:downstream", "more", "+3 more"
    )
    drawn.edges.append(PictureEdge("dataset:7", "more:dataset:7:downstream", "more"))
    placed = layout(drawn)
    assert ("dataset:7", "more:dataset:7:downstream") in {
        (route.source, route.target) for route in placed.routes
    }
    assert placed.boxes["more:dataset:7:downstream"].x > placed.boxes["dataset:7"].x


def test_many_dummy_points_also_fall_back_to_columns() -> None:
    # Few pairs, but each runs far against the flow: a layered layout would route every one
    # through a dummy point per layer it crosses.
    drawn = PictureInput(focus="dataset:0")
    chain = [f"{'job' if index % 2 else 'dataset'}:{index}" for index in range(41)]
    for ref in chain:
        drawn.nodes[ref] = PictureNode(ref, ref.split(":")[0], ref, focused=ref == "dataset:0")
    drawn.edges += [PictureEdge(a, b, "output") for a, b in itertools.pairwise(chain)]
    for index in range(1, 41, 2):  # each job also writes the datasets far behind it
        for target in range(0, index - 10, 2):
            drawn.edges.append(PictureEdge(chain[index], chain[target], "output"))
    placed = layout(drawn)
    assert len({(e.source, e.target) for e in drawn.edges}) <= MAX_DRAWN_EDGES
    assert placed.points > LAYERED_LIMIT
    assert placed.mode == "columns" and placed.ordering_steps == 0
    xs = [placed.boxes[ref].x for ref in chain]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)  # one column per hop


def test_layers_are_hops_from_the_focus_however_cyclic_the_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # About the layers, not the crossing passes' time budget (the next test's): on a machine
    # at load 20+ the 1-s budget ran out before the first pass and the note was not empty.
    monkeypatch.setattr(lineage_layout, "ORDERING_SECONDS", 600.0)
    drawn = synthetic(30, 12, 8)  # cycles everywhere, small enough for layers
    placed = layout(drawn)
    assert placed.mode == "layered" and placed.note == ""
    ranks = lineage_layout.layers(drawn, {(e.source, e.target): None for e in drawn.edges})  # type: ignore[misc]
    assert ranks["dataset:0"] == 0
    # Datasets an even number of hops away, jobs an odd number: no edge within a layer.
    assert all((ranks[e.source] - ranks[e.target]) % 2 for e in drawn.edges)
    assert len({round(box.x) for box in placed.boxes.values()}) == len(set(ranks.values()))
    assert len(set(ranks.values())) <= 9  # grandalf's own ranking made dozens here
    assert_no_overlap(placed)


def test_crossing_passes_stop_at_their_time_budget_and_the_page_says_so(
    monkeypatch: pytest.MonkeyPatch, ingest_client: Client, super_client: Client
) -> None:
    monkeypatch.setattr(lineage_layout, "ORDERING_SECONDS", 0.0)
    placed = layout(synthetic(30, 12, 8))
    assert placed.mode == "layered" and placed.ordering_stopped
    assert placed.ordering_steps == 0  # the budget was spent before the first pass
    assert_no_overlap(placed)  # placed all the same, in the layers' first order
    assert "Crossing reduction stopped after 0 layer passes" in placed.note
    events = dense_events()[:3]
    ingest_and_derive(ingest_client, events)
    focus = Dataset.objects.get(namespace=NAMESPACE, name=events[0]["inputs"][0]["name"])
    page = super_client.get(f"/admin/catalog/dataset/{focus.pk}/change/").content.decode()
    assert 'data-layout="layered"' in page
    assert "Crossing reduction stopped after" in page


def test_column_edges_are_bounded_and_the_rest_counted(
    monkeypatch: pytest.MonkeyPatch, super_client: Client
) -> None:
    import catalog.picture.build as lineage_picture
    from tests.api.factories import add_fields, make_column_edge, make_dataset, make_edge, make_job

    source, target = make_dataset("col.source"), make_dataset("col.target")
    add_fields(source, "amount", "id")
    job = make_job("col.job")
    make_edge(source, target, job)
    make_column_edge(source, "amount", target, "total", job)
    make_column_edge(source, "id", target, "id", job)
    monkeypatch.setattr(lineage_picture, "MAX_COLUMN_EDGES", 1)
    page = super_client.get(
        f"/admin/catalog/dataset/{target.pk}/change/?lineage_columns=1"
    ).content.decode()
    assert len(re.findall(r'class="lc-column-edge[ "]', page)) == 1
    assert "1 column edge(s) not drawn (at most 1 are)" in page


def test_an_edge_within_one_layer_is_drawn_in_columns_not_crashing_the_layout() -> None:
    # The graph draws dataset <-> job edges, which alternate layers; a kind joining two
    # datasets both ways (a cycle keeps its hops, layout.layers) puts both ends in one
    # layer, which grandalf cannot route.
    drawn = PictureInput(focus="dataset:1")
    for ref in ("dataset:1", "job:2", "dataset:3", "dataset:4"):
        drawn.nodes[ref] = PictureNode(ref, ref.split(":")[0], ref, focused=ref == "dataset:1")
    drawn.edges += [
        PictureEdge("dataset:1", "job:2", "input"),
        PictureEdge("job:2", "dataset:3", "output"),
        PictureEdge("job:2", "dataset:4", "output"),
        PictureEdge("dataset:3", "dataset:4", "copies"),
        PictureEdge("dataset:4", "dataset:3", "copies"),
    ]
    placed = layout(drawn)
    assert placed.mode == "columns" and "same number of hops" in placed.note
    assert len(placed.routes) == 5
    assert_no_overlap(placed)

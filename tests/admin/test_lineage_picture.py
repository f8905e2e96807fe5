"""The lineage picture: its layout input (nodes, edges, cut markers), the layout and the SVG.

Hand-built graphs (tests/api/factories.py) so each shape is exact: a chain cut by depth, a
fan-out cut by the node budget, a cycle, column lineage, as_of. The picture must read the
same walk as /api/v1/lineage/graph, so the drawn nodes are compared with the API's.
"""

import itertools
import re
from typing import Any

import pytest
from django.test import Client

from catalog.lineage import graph
from catalog.lineage.request import NodeRef
from catalog.models import Dataset, DatasetAlias, Job, JobDataset, JobLineageEdge, LineageEdge
from catalog.names import naming
from catalog.picture.build import (
    MARKER_COUNT_CAP,
    MAX_NODES,
    Controls,
    Expansion,
    PictureEdge,
    PictureInput,
    PictureNode,
    build_picture,
)
from catalog.picture.geometry import Layout
from catalog.picture.layout import layout
from catalog.picture.svg import render_svg
from tests.api.factories import (
    T0,
    add_fields,
    at,
    make_column_edge,
    make_dataset,
    make_edge,
    make_job,
    make_job_edge,
)

pytestmark = pytest.mark.django_db


def expand_link(expansion: Expansion) -> str:
    return f"/expand?{expansion}"


def picture(root: Any, **controls: Any) -> PictureInput:
    ref = NodeRef("dataset" if hasattr(root, "aliases") else "job", root.pk)
    return build_picture(ref, Controls(**controls), expand_link, graph)


def chain(length: int, name: str = "chain") -> list[Any]:
    datasets = [make_dataset(f"{name}.t{index}") for index in range(length)]
    job = make_job(f"{name}.job")
    for source, target in itertools.pairwise(datasets):
        make_edge(source, target, job)
    return datasets


def fan_out(source: Dataset, job: Job, names: list[str]) -> list[Dataset]:
    """A dataset for each of ``names``, the target of an edge from ``source`` through ``job``
    without runs: the rows ``make_dataset(name)`` and ``make_edge(source, target, job,
    runs=[])`` write (tests/api/factories.py), in bulk. One by one they were about a dozen
    statements a target and most of the fan-out test's CPU (ADR 0147)."""
    seen = {"first_seen": T0, "last_seen": T0}
    namespace = "postgres://db:5432"
    targets = Dataset.objects.bulk_create(
        Dataset(namespace=namespace, name=name, **seen) for name in names
    )
    aliases = DatasetAlias.objects.bulk_create(
        DatasetAlias(
            dataset=target,
            namespace=namespace,
            name=target.name,
            key_hash=naming.key_hash(namespace, target.name),
            reason="event",
            reason_detail="",
            **seen,
        )
        for target in targets
    )
    LineageEdge.objects.bulk_create(
        LineageEdge(
            source=source, target=target, job=job, run_count=0, completed_run_count=0, **seen
        )
        for target in targets
    )
    JobDataset.objects.get_or_create(
        job=job, alias=source.aliases.order_by("id").first(), direction="input", defaults=seen
    )
    JobDataset.objects.bulk_create(
        JobDataset(job=job, alias=alias, direction="output", **seen) for alias in aliases
    )
    make_job_edge(job, source, "input", runs=[])
    JobLineageEdge.objects.bulk_create(
        JobLineageEdge(
            job=job, dataset=target, direction="output", run_count=0, completed_run_count=0, **seen
        )
        for target in targets
    )
    return targets


def ref(obj: Any) -> str:
    return f"{'dataset' if hasattr(obj, 'aliases') else 'job'}:{obj.pk}"


def assert_no_overlap(placed: Layout) -> None:
    boxes = sorted(placed.boxes.items(), key=lambda item: (item[1].x, item[1].y))
    for (a_ref, a), (b_ref, b) in itertools.combinations(boxes, 2):
        apart = a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
        assert apart, f"{a_ref} and {b_ref} overlap"


def test_chain_cut_by_depth_has_a_marker_where_it_was_cut() -> None:
    t = chain(6)
    drawn = picture(t[2], depth=1)
    datasets = {ref(t[1]), ref(t[2]), ref(t[3])}
    assert {r for r, n in drawn.nodes.items() if n.kind == "dataset"} == datasets
    assert [n.kind for n in drawn.nodes.values()].count("job") == 1
    assert drawn.nodes[ref(t[2])].focused
    assert sum(node.focused for node in drawn.nodes.values()) == 1
    # Bipartite edges with their kinds: dataset → job (input), job → dataset (output).
    kinds = {(e.source, e.target): e.kind for e in drawn.edges if e.kind != "more"}
    job = next(r for r, n in drawn.nodes.items() if n.kind == "job")
    assert kinds == {
        (ref(t[1]), job): "input",
        (job, ref(t[2])): "output",
        (ref(t[2]), job): "input",
        (job, ref(t[3])): "output",
    }
    # One hop further on each side is cut: one marker each, hanging off the cut node.
    markers = {r: n for r, n in drawn.nodes.items() if n.kind == "more"}
    assert set(markers) == {
        f"more:{ref(t[1])}:upstream",
        f"more:{ref(t[3])}:downstream",
    }
    up = markers[f"more:{ref(t[1])}:upstream"]
    assert (up.count, up.label, up.direction) == (1, "+1 more", "upstream")
    assert up.url == f"/expand?{ref(t[1])}:upstream"
    assert PictureEdge(up.id, ref(t[1]), "more") in drawn.edges
    assert PictureEdge(ref(t[3]), f"more:{ref(t[3])}:downstream", "more") in drawn.edges
    # Every node links to its admin page.
    assert drawn.nodes[ref(t[1])].url == f"/admin/catalog/dataset/{t[1].pk}/change/"
    assert drawn.nodes[job].url == f"/admin/catalog/job/{job.split(':')[1]}/change/"


def test_the_picture_draws_the_api_graph(read_client: Client) -> None:
    t = chain(5)
    body = read_client.get(f"/api/v1/lineage/graph?node={ref(t[2])}&depth=2&direction=both").json()
    drawn = picture(t[2], depth=2)
    assert {n["id"] for n in body["nodes"]} == {
        r for r, n in drawn.nodes.items() if n.kind != "more"
    }
    assert {(e["source"], e["target"], e["kind"]) for e in body["edges"]} == {
        (e.source, e.target, e.kind) for e in drawn.edges if e.kind != "more"
    }


def test_expanding_a_marker_walks_on_from_there() -> None:
    t = chain(6)
    expansion = Expansion(NodeRef("dataset", t[3].pk), "downstream")
    drawn = picture(t[2], depth=1, expand=[expansion])
    assert ref(t[4]) in drawn.nodes and ref(t[5]) not in drawn.nodes  # one more hop (depth 1)
    assert f"more:{ref(t[3])}:downstream" not in drawn.nodes
    assert f"more:{ref(t[4])}:downstream" in drawn.nodes  # the cut moved on
    assert drawn.nodes[ref(t[2])].focused and not drawn.nodes[ref(t[3])].focused


def test_direction_only_draws_and_marks_that_side() -> None:
    t = chain(6)
    drawn = picture(t[2], depth=1, direction="upstream")
    assert ref(t[3]) not in drawn.nodes
    assert [n.direction for n in drawn.nodes.values() if n.kind == "more"] == ["upstream"]


def test_no_marker_when_nothing_was_cut() -> None:
    t = chain(3)
    drawn = picture(t[1], depth=2)
    assert not drawn.truncated
    assert not [n for n in drawn.nodes.values() if n.kind == "more"]


def test_a_fan_out_of_hundreds_is_cut_by_the_budget_and_drawn_without_overlap() -> None:
    source = make_dataset("fan.source")
    job = make_job("fan.job")
    targets = fan_out(source, job, [f"fan.t{index:03}" for index in range(MAX_NODES + 100)])
    drawn = picture(source, depth=1)
    drawn_targets = [n for n in drawn.nodes.values() if n.kind == "dataset"]
    assert len(drawn_targets) + 1 == MAX_NODES  # the budget counts the job too
    marker = drawn.nodes[f"more:{ref(source)}:downstream"]
    assert marker.count == min(len(targets) - (MAX_NODES - 2), MARKER_COUNT_CAP)
    placed = layout(drawn)
    assert_no_overlap(placed)
    # Left to right: the source, then the job, then the targets.
    job_box = placed.boxes[ref(job)]
    assert placed.boxes[ref(source)].x + placed.boxes[ref(source)].w < job_box.x
    assert all(
        placed.boxes[r].x > job_box.x + job_box.w
        for r in drawn.nodes
        if r != ref(job) and r != ref(source) and not r.startswith("more:")
    )


def test_a_cycle_is_drawn_without_overlap_and_every_edge_routed() -> None:
    a, b, c = (make_dataset(f"cycle.{name}") for name in "abc")
    job = make_job("cycle.job")
    for source, target in ((a, b), (b, c), (c, a)):
        make_edge(source, target, job)
    back = make_job("cycle.back")
    make_edge(b, a, back)
    drawn = picture(a, depth=3)
    placed = layout(drawn)
    assert_no_overlap(placed)
    assert len(placed.routes) == len(drawn.edges)
    assert all(len(route.points) >= 2 for route in placed.routes)


def test_upstream_is_left_of_the_focus_and_downstream_right() -> None:
    t = [make_dataset(f"hops.t{index}") for index in range(5)]
    for index, (source, target) in enumerate(itertools.pairwise(t)):
        make_edge(source, target, make_job(f"hops.job{index}"))
    placed = layout(picture(t[2], depth=2))
    xs = [placed.boxes[ref(d)].x for d in t]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_column_mode_lists_fields_and_draws_column_edges() -> None:
    source, target = make_dataset("col.source"), make_dataset("col.target")
    add_fields(source, "amount", "id")
    job = make_job("col.job")
    make_edge(source, target, job)
    make_column_edge(source, "amount", target, "total", job)
    make_column_edge(source, "id", target, "id", job)
    drawn = picture(target, depth=1, columns=True)
    assert drawn.nodes[ref(source)].fields == ["amount", "id"]
    assert drawn.nodes[ref(target)].fields == ["id", "total"]
    assert {(e.source_field, e.target_field) for e in drawn.column_edges} == {
        ("amount", "total"),
        ("id", "id"),
    }
    placed = layout(drawn)
    assert placed.boxes[ref(source)].h > placed.boxes[ref(job)].h  # room for the field list
    svg = render_svg(drawn, placed, "test")
    # (Stale, too: these hand-made edges have no run facts behind them, ADR 0060.)
    assert svg.count('<path class="lc-column-edge') == 2
    assert ">amount</text>" in svg and ">total</text>" in svg
    assert picture(target, depth=1).column_edges == []  # off by default


def test_as_of_draws_the_graph_as_it_was() -> None:
    old, new, target = make_dataset("asof.old"), make_dataset("asof.new"), make_dataset("asof.t")
    job = make_job("asof.job")
    make_edge(old, target, job, first=at(1))
    make_edge(new, target, job, first=at(10))
    assert ref(new) in picture(target, depth=1).nodes
    then = picture(target, depth=1, as_of=at(5))
    assert ref(old) in then.nodes and ref(new) not in then.nodes


def test_a_new_edge_kind_is_laid_out_and_drawn_with_its_own_class() -> None:
    # The graph function may grow edge kinds (e.g. a job writing a dataset directly).
    drawn = PictureInput(focus="job:1")
    drawn.nodes["job:1"] = PictureNode("job:1", "job", "load", focused=True, url="/j/1")
    drawn.nodes["dataset:2"] = PictureNode("dataset:2", "dataset", "orders", url="/d/2")
    drawn.edges.append(PictureEdge("job:1", "dataset:2", "writes <directly>"))
    placed = layout(drawn)
    svg = render_svg(drawn, placed, "test")
    assert 'class="lc-edge lc-edge-writes-directly-"' in svg
    assert 'marker-end="url(#lc-arrow)"' in svg
    assert placed.boxes["job:1"].x < placed.boxes["dataset:2"].x


def test_svg_escapes_names_and_links_every_node() -> None:
    hostile = make_dataset('evil"<script>.t')
    target = make_dataset("safe.t")
    make_edge(hostile, target, make_job("j<b>"))
    drawn = picture(target, depth=1)
    svg = render_svg(drawn, layout(drawn), "label")
    assert "<script>" not in svg and "<b>" not in svg
    hrefs = re.findall(r'<a href="([^"]+)" class="lc-node', svg)
    assert len(hrefs) == len(drawn.nodes)
    assert f"/admin/catalog/dataset/{hostile.pk}/change/" in hrefs


def test_the_picture_costs_a_fixed_number_of_queries(
    django_assert_max_num_queries: Any,
) -> None:
    # Both cut on both sides: the walk (with the jobs that link its nodes, then the drawn
    # job edges, ADR 0027), its cut checks, one marker count per side, which drawn edges
    # the jobs' latest completed runs still produce (ADR 0060); static lineage (ADR 0061)
    # adds its declared pairs, declaring jobs, drawn declarations, column edges; the drawn
    # jobs' control edges are one more (19 → 20, issue 41 item 4, ADR 0090).
    small = chain(6)
    with django_assert_max_num_queries(20) as small_queries:
        picture(small[3], depth=1, columns=True)
    large = chain(40, name="long")
    with django_assert_max_num_queries(20) as large_queries:
        picture(large[20], depth=5, columns=True)
    assert len(large_queries) == len(small_queries)


def test_the_layout_engine_places_hundreds_in_a_layer_without_overlap() -> None:
    # More than the picture can ever hold (150 + 4 expansions of 50), no database needed.
    drawn = PictureInput(focus="dataset:0")
    drawn.nodes["dataset:0"] = PictureNode("dataset:0", "dataset", "source", focused=True)
    drawn.nodes["job:1"] = PictureNode("job:1", "job", "fan")
    drawn.edges.append(PictureEdge("dataset:0", "job:1", "input"))
    for index in range(1, 401):
        ref = f"dataset:{index}"
        drawn.nodes[ref] = PictureNode(ref, "dataset", f"t{index}")
        drawn.edges.append(PictureEdge("job:1", ref, "output"))
    placed = layout(drawn)
    assert_no_overlap(placed)
    assert len({box.x for ref, box in placed.boxes.items() if ref.startswith("dataset:")}) == 2

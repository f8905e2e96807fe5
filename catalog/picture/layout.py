"""The steward's lineage picture, step 2 of 3: where to draw it (docs/adr/0047).

A layered (Sugiyama) layout by grandalf, a pure-Python layout engine: the nodes go into
layers by their hops from the focus, stretched so that edges outside a cycle run left to
right (``layers``; a cycle's edges against the flow are grandalf's inverted edges),
grandalf orders each layer to reduce crossings, places nodes with Brandes-Köpf and routes
long edges through dummy points, so nothing overlaps however wide a fan-out is. Its work
is bounded (ADR 0057): above a size the picture is laid out in columns instead
(catalog/picture/column_layout.py), and the crossing passes have a time budget.
grandalf lays layers out top to bottom; the picture reads left to right (upstream left),
so the layout runs on transposed sizes and the result is transposed back. Each connected
component is laid out on its own and the components are stacked.
"""

import time
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from grandalf.graphs import Edge, Vertex, graph_core

from catalog.picture.build import PictureInput
from catalog.picture.column_layout import column_layout
from catalog.picture.geometry import (
    COMPONENT_GAP,
    LAYER_GAP,
    LAYERED_LIMIT,
    MARGIN,
    MAX_DRAWN_EDGES,
    MAX_LAYER_SPAN,
    NODE_GAP,
    ORDERING_ROUNDS,
    ORDERING_SECONDS,
    Box,
    Layout,
    Route,
    components,
    node_size,
    strongly_connected,
    topological_order,
)

if TYPE_CHECKING:
    from grandalf.layouts import SugiyamaLayout

# grandalf.layouts is imported where a picture is laid out, not with this module: it imports
# numpy (about a tenth of a `manage.py` start-up), and every process imports this module
# through the admin's registry, while only the admin's picture pages lay anything out
# (ADR 0113).


class _View:
    """grandalf's view protocol: a size in, a centre out (in its top-to-bottom frame)."""

    def __init__(self, width: float, height: float) -> None:
        # Transposed: grandalf's w is the extent within a layer (our height).
        self.w, self.h = height, width
        self.xy: tuple[float, float] = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = list(points)


def layout(picture: PictureInput) -> Layout:
    """Where every node goes and how every drawn edge runs, in bounded work (ADR 0057).

    Layered (grandalf) when the graph is small enough to lay out in layers quickly: at most
    ``MAX_DRAWN_EDGES`` node pairs and ``LAYERED_LIMIT`` points to place (nodes plus one per
    layer a long edge crosses), with the crossing passes stopped after ``ORDERING_SECONDS``.
    Otherwise in columns (catalog/picture/column_layout.py): the same layers, a few ordering sweeps,
    edges drawn straight across and at most ``MAX_DRAWN_EDGES`` of them, nearest the focus
    first; ``Layout.note`` says so, for the page.
    """
    vertices = {ref: Vertex(ref) for ref in picture.nodes}
    for ref, vertex in vertices.items():
        vertex.view = _View(*node_size(picture.nodes[ref]))
    # One layout edge per node pair (edges of several kinds between two nodes share it).
    pairs: dict[tuple[str, str], Edge] = {}
    for edge in picture.edges:
        key = (edge.source, edge.target)
        if key in pairs or edge.source not in vertices or edge.target not in vertices:
            continue
        if edge.source == edge.target:
            continue  # grandalf cannot rank a self-loop; the svg draws it as a loop
        layout_edge = Edge(vertices[edge.source], vertices[edge.target])
        layout_edge.view = _EdgeView()
        pairs[key] = layout_edge
    rank = layers(picture, pairs)
    points = len(vertices) + sum(max(abs(rank[t] - rank[s]) - 1, 0) for s, t in pairs)
    result = Layout(points=points)
    # An edge within one layer (not dataset <-> job, which alternate) grandalf cannot route.
    flat = any(rank[source] == rank[target] for source, target in pairs)
    if len(pairs) > MAX_DRAWN_EDGES or points > LAYERED_LIMIT or flat:
        column_layout(picture, pairs, rank, result, dense=not flat)
    else:
        _layered(picture, vertices, pairs, rank, result)
        result.pairs = result.pairs_drawn = len(pairs)
    _assign_kinds(result, picture)
    return result


def layers(picture: PictureInput, pairs: dict[tuple[str, str], Edge]) -> dict[str, int]:
    """Each node's layer: its hops from the focus, negative upstream, positive downstream,
    then stretched so that every edge outside a cycle points right (``_stretch``).

    Breadth first downstream from the focus, then upstream; what neither walk reaches (a
    second writer of a drawn dataset, a marker) goes one layer before or after a placed
    neighbour, by the edge's direction; a part not joined to the focus starts at 0. Hops
    alone drew a job's consumers to the left: on a dbt run's page its models are one hop
    away (parent edges) and so are the tables they read, though another model wrote them.
    Edges within a cycle keep their hops: ranking a dense cyclic graph by longest path,
    grandalf's own ranking, turned 100 nodes into 92 layers.
    """
    forward: dict[str, list[str]] = defaultdict(list)
    backward: dict[str, list[str]] = defaultdict(list)
    for source, target in pairs:
        forward[source].append(target)
        backward[target].append(source)
    rank: dict[str, int] = {}

    def spread(queue: deque[str], directions: tuple[tuple[dict, int], ...]) -> None:
        while queue:
            ref = queue.popleft()
            for links, step in directions:
                for following in links[ref]:
                    if following not in rank:
                        rank[following] = rank[ref] + step
                        queue.append(following)

    both = ((forward, 1), (backward, -1))
    if picture.focus in picture.nodes:
        rank[picture.focus] = 0
        spread(deque([picture.focus]), both[:1])  # downstream
        spread(deque([picture.focus]), both[1:])  # upstream
        spread(deque(rank), both)
    for ref in picture.nodes:
        if ref not in rank:
            rank[ref] = 0
            spread(deque([ref]), both)
    _stretch(rank, forward, picture.focus)
    return rank


def _stretch(rank: dict[str, int], forward: dict[str, list[str]], focus: str) -> None:
    """Move nodes outward until every edge between two cycles' worth of nodes (strongly
    connected components) runs left to right: in topological order, downstream of the focus
    a target moves right of its source; then in reverse order, upstream, a source moves left
    of its target. The focus stays at 0; no node moves past ``MAX_LAYER_SPAN`` either side,
    so the picture's width stays bounded (an edge the bound leaves flat sends the picture to
    the column layout, which draws any edge). Linear in the nodes and edges."""
    component = strongly_connected(list(rank), forward)
    across = {
        ref: [target for target in forward[ref] if component[target] != component[ref]]
        for ref in rank
    }
    order = topological_order(list(rank), across)
    for source in order:
        if rank[source] < 0:
            continue
        for target in across[source]:
            if target != focus and rank[target] <= rank[source]:
                rank[target] = min(rank[source] + 1, MAX_LAYER_SPAN)
    for source in reversed(order):
        for target in across[source]:
            if source != focus and rank[target] <= 0 and rank[source] >= rank[target]:
                rank[source] = max(rank[target] - 1, -MAX_LAYER_SPAN)


def _layered(
    picture: PictureInput,
    vertices: dict[str, Vertex],
    pairs: dict[tuple[str, str], Edge],
    rank: dict[str, int],
    result: Layout,
) -> None:
    result.mode = "layered"
    top = float(MARGIN)
    width = 0.0
    deadline = time.perf_counter() + ORDERING_SECONDS
    for members, links in components(picture, pairs):
        component = graph_core([vertices[ref] for ref in members], links)
        sugiyama = _sugiyama(component)
        sugiyama.xspace, sugiyama.yspace = NODE_GAP, LAYER_GAP
        _init_layers(sugiyama, component, rank)
        for _ in range(ORDERING_ROUNDS):  # each step orders one layer; stop at the budget
            steps = sugiyama.ordering_step()
            while not result.ordering_stopped:
                if time.perf_counter() > deadline:
                    result.ordering_stopped = True  # the order so far is kept
                elif next(steps, None) is None:
                    break
                else:
                    result.ordering_steps += 1
        sugiyama.setxy()
        sugiyama.draw_edges()
        boxes = {}
        for vertex in component.sV:
            # Back from grandalf's frame: its y (layer) is our x, its x is our y.
            layer_pos, in_layer = vertex.view.xy[1], vertex.view.xy[0]
            w, h = vertex.view.h, vertex.view.w
            boxes[vertex.data] = Box(layer_pos - w / 2, in_layer - h / 2, w, h)
        # Long edges may be routed outside every box (above the first row, say): the
        # component's extent covers their points too, or the svg would clip them.
        bends = [(y, x) for edge in component.sE for x, y in edge.view.points]
        left = min([box.x for box in boxes.values()] + [x for x, _ in bends])
        upper = min([box.y for box in boxes.values()] + [y for _, y in bends])
        dx, dy = MARGIN - left, top - upper
        for ref, box in boxes.items():
            result.boxes[ref] = Box(box.x + dx, box.y + dy, box.w, box.h)
        bottom = max([box.y + box.h for box in result.boxes.values()] + [y + dy for _, y in bends])
        right = max([box.x + box.w for box in result.boxes.values()] + [x + dx for x, _ in bends])
        width = max(width, right)
        for layout_edge in component.sE:
            points = [(y + dx, x + dy) for x, y in layout_edge.view.points]
            result.routes.append(Route(layout_edge.v[0].data, layout_edge.v[1].data, "", points))
        top = bottom + COMPONENT_GAP
    result.width = width + MARGIN
    result.height = top - COMPONENT_GAP + MARGIN if result.boxes else 2 * MARGIN
    if result.ordering_stopped:
        result.note = (
            f"Crossing reduction stopped after {result.ordering_steps} layer passes (its time "
            "budget): some edges may cross more than they need to."
        )


def _sugiyama(component: Any) -> "SugiyamaLayout":
    from grandalf.layouts import SugiyamaLayout  # not with the module: see above

    return SugiyamaLayout(component)


def _init_layers(sugiyama: "SugiyamaLayout", component: Any, rank: dict[str, int]) -> None:
    """grandalf's ``init_all`` with our layers instead of its ranking: edges running right
    to left are its inverted edges, long edges get their dummy points, layers are set up."""
    base = min(rank[vertex.data] for vertex in component.sV)
    count = max(rank[vertex.data] for vertex in component.sV) - base + 1
    members: list[list[Vertex]] = [[] for _ in range(count)]
    for vertex in component.sV:
        sugiyama.grx[vertex].rank = rank[vertex.data] - base
        members[rank[vertex.data] - base].append(vertex)
    from grandalf.layouts import Layer  # not with the module: see above

    sugiyama.layers = [Layer(layer) for layer in members]
    sugiyama.alt_e = [edge for edge in component.sE if rank[edge.v[0].data] > rank[edge.v[1].data]]
    for edge in component.sE:
        sugiyama.setdummies(edge)
    for layer in sugiyama.layers:
        layer.setup(sugiyama)
    sugiyama.initdone = True


def _assign_kinds(result: Layout, picture: PictureInput) -> None:
    """One route per picture edge: edges sharing a node pair share its routed points."""
    by_pair: dict[tuple[str, str], list[tuple[float, float]]] = {
        (route.source, route.target): route.points for route in result.routes
    }
    routes = []
    for edge in picture.edges:
        points: Any = by_pair.get((edge.source, edge.target))
        if points is None:
            if edge.source != edge.target or edge.source not in result.boxes:
                continue  # not drawn (over MAX_DRAWN_EDGES)
            points = []  # a self-loop
        routes.append(Route(edge.source, edge.target, edge.kind, points))
    result.routes = routes

"""The steward's lineage picture, step 2 of 3: where to draw it (docs/adr/0047).

A layered (Sugiyama) layout by grandalf, a pure-Python layout engine: it ranks the nodes
into layers (cycles are broken by reversing a feedback set of edges), orders each layer to
reduce crossings, places nodes with Brandes-Köpf and routes long edges through dummy points,
so nothing overlaps however wide a fan-out is. grandalf lays layers out top to bottom; the
picture reads left to right (upstream left), so the layout runs on transposed sizes and
the result is transposed back. Each connected component is laid out on its own and the
components are stacked.
"""

from dataclasses import dataclass, field
from typing import Any

from grandalf.graphs import Edge, Vertex, graph_core
from grandalf.layouts import SugiyamaLayout

from catalog.lineage_picture import PictureInput, PictureNode

MARGIN = 12
LAYER_GAP = 64  # horizontal space between layers
NODE_GAP = 14  # vertical space between nodes of a layer
COMPONENT_GAP = 30
DATASET_WIDTH, DATASET_HEIGHT = 230, 40
JOB_WIDTH, JOB_HEIGHT = 210, 40
MORE_WIDTH, MORE_HEIGHT = 96, 26
FIELD_ROW = 16
# Ordering passes (grandalf's default is 1.5); more passes cost time for few crossings.
ORDERING_ROUNDS = 2


@dataclass
class Box:
    x: float  # left
    y: float  # top
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass
class Route:
    source: str
    target: str
    kind: str
    points: list[tuple[float, float]]


@dataclass
class Layout:
    boxes: dict[str, Box] = field(default_factory=dict)
    routes: list[Route] = field(default_factory=list)
    width: float = 0
    height: float = 0


def node_size(node: PictureNode) -> tuple[float, float]:
    if node.kind == "more":
        return MORE_WIDTH, MORE_HEIGHT
    if node.kind == "job":
        return JOB_WIDTH, JOB_HEIGHT
    rows = len(node.fields) + (1 if node.hidden_fields else 0)
    return DATASET_WIDTH, DATASET_HEIGHT + (rows * FIELD_ROW + 4 if rows else 0)


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
    result = Layout()
    top = float(MARGIN)
    width = 0.0
    for members, links in _components(picture, pairs):
        component = graph_core([vertices[ref] for ref in members], links)
        sugiyama = SugiyamaLayout(component)
        sugiyama.xspace, sugiyama.yspace = NODE_GAP, LAYER_GAP
        roots = [v for v in component.sV if not v.e_in()]
        if not roots:  # every node is on a cycle: start from the focus, or any node
            focus = [v for v in component.sV if v.data == picture.focus]
            roots = focus or [component.sV[0]]
        sugiyama.init_all(roots=roots)
        sugiyama.draw(ORDERING_ROUNDS)
        boxes = {}
        for vertex in component.sV:
            # Back from grandalf's frame: its y (layer) is our x, its x is our y.
            layer_pos, in_layer = vertex.view.xy[1], vertex.view.xy[0]
            w, h = vertex.view.h, vertex.view.w
            boxes[vertex.data] = Box(layer_pos - w / 2, in_layer - h / 2, w, h)
        left = min(box.x for box in boxes.values())
        upper = min(box.y for box in boxes.values())
        dx, dy = MARGIN - left, top - upper
        for ref, box in boxes.items():
            result.boxes[ref] = Box(box.x + dx, box.y + dy, box.w, box.h)
        bottom = max(box.y + box.h for box in result.boxes.values())
        width = max(width, max(box.x + box.w for box in result.boxes.values()))
        for layout_edge in component.sE:
            points = [(y + dx, x + dy) for x, y in layout_edge.view.points]
            result.routes.append(Route(layout_edge.v[0].data, layout_edge.v[1].data, "", points))
        top = bottom + COMPONENT_GAP
    result.width = width + MARGIN
    result.height = top - COMPONENT_GAP + MARGIN if result.boxes else 2 * MARGIN
    _assign_kinds(result, picture)
    return result


def _components(
    picture: PictureInput, pairs: dict[tuple[str, str], Edge]
) -> list[tuple[list[str], list[Edge]]]:
    """Connected components, largest first (union-find). grandalf's own ``Graph`` finds
    them by comparing vertex sets, quadratic in the nodes: 160 ms at 200 nodes."""
    parent = {ref: ref for ref in picture.nodes}

    def find(ref: str) -> str:
        while parent[ref] != ref:
            parent[ref] = parent[parent[ref]]
            ref = parent[ref]
        return ref

    for source, target in pairs:
        parent[find(source)] = find(target)
    members: dict[str, list[str]] = {}
    for ref in picture.nodes:
        members.setdefault(find(ref), []).append(ref)
    links: dict[str, list[Edge]] = {root: [] for root in members}
    for (source, _), edge in pairs.items():
        links[find(source)].append(edge)
    groups = [(members[root], links[root]) for root in members]
    return sorted(groups, key=lambda group: -len(group[0]))


def _assign_kinds(result: Layout, picture: PictureInput) -> None:
    """One route per picture edge: edges sharing a node pair share its routed points."""
    by_pair: dict[tuple[str, str], list[tuple[float, float]]] = {
        (route.source, route.target): route.points for route in result.routes
    }
    routes = []
    for edge in picture.edges:
        points: Any = by_pair.get((edge.source, edge.target))
        if points is None:
            if edge.source not in result.boxes or edge.target not in result.boxes:
                continue
            points = []  # a self-loop
        routes.append(Route(edge.source, edge.target, edge.kind, points))
    result.routes = routes

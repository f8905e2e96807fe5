"""The picture's geometry: sizes, gaps and bounds, the boxes and routes a layout returns,
and the connected components both layouts lay out one by one (docs/adr/0047, 0057)."""

from dataclasses import dataclass, field

from grandalf.graphs import Edge

from catalog.picture.build import PictureInput, PictureNode

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
# The layout's work is bounded, whatever graph a producer planted (issue 27, ADR 0057):
# above either size the picture is laid out in columns (catalog/picture/column_layout.py).
MAX_DRAWN_EDGES = 500  # node pairs; the columns draw this many, nearest the focus first
LAYERED_LIMIT = 1500  # nodes plus dummy points (one per layer a long edge crosses)
ORDERING_SECONDS = 0.3  # grandalf's crossing passes stop here (the order so far is kept)
# Layers either side of the focus when edges stretch a picture (layout.layers): a chain
# longer than this inside a drawn walk is drawn in columns rather than ever wider.
MAX_LAYER_SPAN = 12
# Text is measured here, without a browser: widths in em by character class, set to the
# widest of the usual sans fonts (DejaVu Sans; Arial, Helvetica and SF are narrower), so a
# label fitted to its box is never clipped by the font the steward's browser picks.
_NARROW, _SEMI, _WIDE = set("ijlI.,:;'|!"), set("frt()[]{}/\\- "), set("mwMW@%")
BOLD_FACTOR = 1.08
MONO_EM = 0.61  # every character of a monospace font
ELLIPSIS = "…"


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
    mode: str = "layered"  # or "columns" (the cheaper layout above the bounds)
    points: int = 0  # what a layered layout would place: nodes and dummy points
    ordering_steps: int = 0  # layers ordered by grandalf's crossing passes
    ordering_stopped: bool = False  # the passes ran out of time
    pairs: int = 0  # node pairs joined by an edge
    pairs_drawn: int = 0
    note: str = ""  # what the steward should know about how it was laid out


def node_size(node: PictureNode) -> tuple[float, float]:
    if node.kind == "more":
        return MORE_WIDTH, MORE_HEIGHT
    if node.kind == "job":
        return JOB_WIDTH, JOB_HEIGHT
    rows = len(node.fields) + (1 if node.hidden_fields else 0)
    return DATASET_WIDTH, DATASET_HEIGHT + (rows * FIELD_ROW + 4 if rows else 0)


def text_width(text: str, size: float, bold: bool = False, mono: bool = False) -> float:
    """About how wide ``text`` is drawn at ``size`` px, erring wide (see the classes above)."""
    if mono:
        return len(text) * MONO_EM * size
    ems = 0.0
    for char in text:
        if char in _NARROW:
            ems += 0.32
        elif char in _SEMI:
            ems += 0.42
        elif char in _WIDE or char == ELLIPSIS:
            ems += 1.0
        elif char.isupper():
            ems += 0.74
        else:
            ems += 0.64
    return ems * size * (BOLD_FACTOR if bold else 1.0)


def fit_text(text: str, width: float, size: float, bold: bool = False, mono: bool = False) -> str:
    """``text`` or, when wider than ``width``, its end after an ellipsis: the end of a name
    (the table, the model) tells names apart best; the full name is in the node's tooltip."""
    if text_width(text, size, bold, mono) <= width:
        return text
    tail = text.removeprefix(ELLIPSIS)
    while tail and text_width(ELLIPSIS + tail, size, bold, mono) > width:
        tail = tail[1:]
    return ELLIPSIS + tail


def components(
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


def strongly_connected(nodes: list[str], forward: dict[str, list[str]]) -> dict[str, int]:
    """Each node's strongly connected component (Tarjan's, without recursion: a long chain
    would exceed Python's stack): nodes on one cycle share a number."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    component: dict[str, int] = {}
    stack: list[str] = []
    found = 0
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(forward.get(root, ())))]
        while work:
            ref, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    work.append((target, iter(forward.get(target, ()))))
                elif target not in component:
                    low[ref] = min(low[ref], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[ref])
            if low[ref] == index[ref]:
                found += 1
                while True:
                    member = stack.pop()
                    component[member] = found
                    if member == ref:
                        break
    return component


def topological_order(nodes: list[str], forward: dict[str, list[str]]) -> list[str]:
    """``nodes`` with every source before its targets (Kahn's); ``forward`` has no cycle."""
    incoming = dict.fromkeys(nodes, 0)
    for ref in nodes:
        for target in forward.get(ref, ()):
            incoming[target] += 1
    ready = [ref for ref in nodes if incoming[ref] == 0]
    order = []
    while ready:
        ref = ready.pop()
        order.append(ref)
        for target in forward.get(ref, ()):
            incoming[target] -= 1
            if incoming[target] == 0:
                ready.append(target)
    return order

"""The lineage picture's cheaper layout, for graphs too dense to lay out in layers (ADR 0057).

The same layers as the layered layout (hops from the focus: upstream left, downstream
right), each a column of boxes that never overlap; a few barycentre sweeps put each node
near its neighbours; edges run straight from box to box (no dummy points), and at most
``MAX_DRAWN_EDGES`` of them are drawn, nearest the focus first. Linear in the nodes and
edges: a dense graph a producer planted costs milliseconds, not minutes.
"""

from collections import defaultdict
from typing import Any

from catalog.picture.build import PictureInput
from catalog.picture.geometry import (
    COMPONENT_GAP,
    LAYER_GAP,
    LAYERED_LIMIT,
    MARGIN,
    MAX_DRAWN_EDGES,
    NODE_GAP,
    Box,
    Layout,
    Route,
    components,
    node_size,
)

SWEEPS = 4  # left to right and back, twice


def _place(index: int, column: list[str]) -> float:
    """A node's place in its column, from 0 (top) to 1 (bottom): columns differ in length."""
    return (index + 0.5) / len(column)


def _barycentre(ref: str, neighbours: dict[str, list[str]], position: dict[str, float]) -> float:
    near = [position[other] for other in neighbours[ref]]
    return sum(near) / len(near) if near else position[ref]


def column_layout(
    picture: PictureInput,
    pairs: dict[tuple[str, str], Any],
    rank: dict[str, int],
    result: Layout,
    dense: bool = True,
) -> None:
    """Lay ``picture`` out in columns into ``result``; ``dense`` says why, for the note (else
    an edge joins two nodes of one layer, which the layered layout cannot route)."""
    result.mode = "columns"
    result.pairs = len(pairs)
    # Nearest the focus first: markers and the focus's own edges stay, far edges go.
    nearest = sorted(
        pairs,
        key=lambda pair: (
            not (pair[0].startswith("more:") or pair[1].startswith("more:")),
            max(abs(rank[pair[0]]), abs(rank[pair[1]])),
        ),
    )
    drawn = nearest[:MAX_DRAWN_EDGES]
    result.pairs_drawn = len(drawn)
    neighbours: dict[str, list[str]] = defaultdict(list)
    for source, target in drawn:
        neighbours[source].append(target)
        neighbours[target].append(source)
    top = float(MARGIN)
    width = 0.0
    for members, _ in components(picture, pairs):
        columns: dict[int, list[str]] = defaultdict(list)
        for ref in members:
            columns[rank[ref]].append(ref)
        order = sorted(columns)
        position = {
            ref: _place(i, column) for column in columns.values() for i, ref in enumerate(column)
        }
        for sweep in range(SWEEPS):
            for layer in order if sweep % 2 == 0 else reversed(order):
                column = columns[layer]
                keys = {ref: _barycentre(ref, neighbours, position) for ref in column}
                column.sort(key=keys.__getitem__)
                for i, ref in enumerate(column):
                    position[ref] = _place(i, column)
        sizes = {ref: node_size(picture.nodes[ref]) for ref in members}
        heights = {
            layer: sum(sizes[ref][1] for ref in column) + NODE_GAP * (len(column) - 1)
            for layer, column in columns.items()
        }
        tallest = max(heights.values())
        x = float(MARGIN)
        for layer in order:
            column = columns[layer]
            column_width = max(sizes[ref][0] for ref in column)
            y = top + (tallest - heights[layer]) / 2
            for ref in column:
                w, h = sizes[ref]
                result.boxes[ref] = Box(x + (column_width - w) / 2, y, w, h)
                y += h + NODE_GAP
            x += column_width + LAYER_GAP
        width = max(width, x - LAYER_GAP)
        top += tallest + COMPONENT_GAP
    for source, target in drawn:
        a, b = result.boxes[source], result.boxes[target]
        result.routes.append(Route(source, target, "", [(a.cx, a.cy), (b.cx, b.cy)]))
    result.width = width + MARGIN
    result.height = top - COMPONENT_GAP + MARGIN if result.boxes else 2 * MARGIN
    hidden = len(pairs) - len(drawn)
    why = (
        f"This graph is too dense to lay out in layers ({len(picture.nodes)} nodes, "
        f"{len(pairs)} linked pairs; the layered layout takes up to {MAX_DRAWN_EDGES} pairs "
        f"and {LAYERED_LIMIT} points)"
        if dense
        else "Some edges join nodes the same number of hops from this node"
    )
    result.note = (
        why
        + ": drawn in columns by hops from this node, edges straight across"
        + (
            f", {hidden} of them not drawn (the farthest from this node; the API lists them)"
            if hidden
            else ""
        )
        + "."
    )

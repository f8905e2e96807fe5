"""The steward's lineage picture, step 3 of 3: the inline SVG (docs/adr/0047).

Every node is an ``<a>`` to its admin page (a "+N more" marker to the expansion), with a
``<title>`` tooltip; datasets are square boxes, jobs rounded pills, the focus is outlined;
edges are curves with arrowheads, classed by kind (``lc-edge-input``, ``lc-edge-output``,
any new kind the graph function emits). Column edges run from a field's row in one dataset
to a field's row in another. Styling lives in the template (admin/catalog/lineage/...).
"""

import re
from html import escape  # Django's escape adds a lazy-string wrapper per call: 3x slower

from django.utils.safestring import SafeString, mark_safe

from catalog.picture.build import PictureInput, PictureNode
from catalog.picture.geometry import DATASET_HEIGHT, FIELD_ROW, Box, Layout, Route, fit_text

_KIND = re.compile(r"[^a-z0-9_-]+")


def _css_kind(kind: str) -> str:
    return _KIND.sub("-", kind.lower()) or "edge"


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _curve(points: list[tuple[float, float]]) -> str:
    """A smooth path through the routed points: horizontal tangents at every point."""
    (x0, y0), rest = points[0], points[1:]
    path = [f"M{_fmt(x0)},{_fmt(y0)}"]
    for x1, y1 in rest:
        bend = max(abs(x1 - x0) / 2, 20)
        sign = 1 if x1 >= x0 else -1
        path.append(
            f"C{_fmt(x0 + sign * bend)},{_fmt(y0)} {_fmt(x1 - sign * bend)},{_fmt(y1)} "
            f"{_fmt(x1)},{_fmt(y1)}"
        )
        x0, y0 = x1, y1
    return " ".join(path)


def _route_points(route: Route, source: Box, target: Box) -> list[tuple[float, float]]:
    """The routed centres, with the ends moved to the boxes' sides."""
    if not route.points:  # a self-loop: out of the right side, round and back in on top
        return [
            (source.x + source.w, source.cy),
            (source.x + source.w + 24, source.y - 14),
            (source.cx, source.y),
        ]
    middle = route.points[1:-1]
    toward = middle[0][0] if middle else target.cx
    start = (source.x + source.w if toward >= source.cx else source.x, source.cy)
    back = middle[-1][0] if middle else source.cx
    end = (target.x if back <= target.cx else target.x + target.w, target.cy)
    return [start, *middle, end]


def _field_y(box: Box, node: PictureNode, name: str) -> float:
    return box.y + DATASET_HEIGHT + 2 + FIELD_ROW * node.fields.index(name) + FIELD_ROW / 2


def _node(node: PictureNode, box: Box) -> str:
    classes = f"lc-node lc-node-{_css_kind(node.kind)}" + (" lc-focus" if node.focused else "")
    x, y, w, h = _fmt(box.x), _fmt(box.y), _fmt(box.w), _fmt(box.h)
    radius = {"job": 18, "more": 13}.get(node.kind, 3)
    parts = [
        f'<a href="{escape(node.url)}" class="{classes}" data-node="{escape(node.id)}">',
        f"<title>{escape(node.title or node.label)}</title>",
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{radius}"/>',
    ]
    if node.kind == "more":
        parts.append(
            f'<text x="{_fmt(box.cx)}" y="{_fmt(box.cy + 4)}" text-anchor="middle">'
            f"{escape(fit_text(node.label, box.w - 8, 12))}</text>"
        )
    else:
        # Every text is fitted inside its box (the pill's rounded ends included): a long
        # name ends in an ellipsis, never runs over the box or out of the picture.
        inset = 16 if node.kind == "job" else 10
        room = box.w - 2 * inset
        text_x = _fmt(box.x + inset)
        parts.append(f'<text x="{text_x}" y="{_fmt(box.y + 17)}" class="lc-label">')
        parts.append(f"{escape(fit_text(node.label, room, 12, bold=True))}</text>")
        parts.append(f'<text x="{text_x}" y="{_fmt(box.y + 32)}" class="lc-sublabel">')
        sublabel = f"{'job · ' if node.kind == 'job' else ''}{node.sublabel}"
        parts.append(f"{escape(fit_text(sublabel, room, 10.5))}</text>")
        for index, name in enumerate(node.fields):
            row_y = box.y + DATASET_HEIGHT + 2 + FIELD_ROW * index
            parts.append(
                f'<text x="{text_x}" y="{_fmt(row_y + 12)}" class="lc-field">'
                f"{escape(fit_text(name, room, 11, mono=True))}</text>"
            )
        if node.hidden_fields:
            row_y = box.y + DATASET_HEIGHT + 2 + FIELD_ROW * len(node.fields)
            parts.append(
                f'<text x="{text_x}" y="{_fmt(row_y + 12)}" class="lc-field lc-more-fields">'
                f"+{node.hidden_fields} more fields</text>"
            )
    parts.append("</a>")
    return "".join(parts)


def render_svg(picture: PictureInput, layout: Layout, label: str) -> SafeString:
    """The picture as one ``<svg>`` element (its size is the layout's)."""
    width, height = _fmt(max(layout.width, 200)), _fmt(max(layout.height, 60))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="lc-lineage" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" data-layout="{escape(layout.mode)}" '
        f'aria-label="{escape(label)}">',
        "<defs>",
        '<marker id="lc-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>',
        '<marker id="lc-arrow-col" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker>',
        # A parent job to its child: an open arrowhead, unlike any data flow's filled one.
        '<marker id="lc-arrow-parent" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
        'markerHeight="8" orient="auto-start-reverse"><path d="M1,1L9,5L1,9"/></marker>',
        "</defs>",
        '<g class="lc-edges">',
    ]
    # Stale edges (a later run no longer produced them) are drawn grey; inputs only the
    # column lineage named are dotted (ADR 0060); edges no run of which completed are red
    # and dashed, attempted only (ADR 0069), which beats stale (no completed run at all).
    extra = {
        (edge.source, edge.target, edge.kind): (
            " lc-attempted" if edge.attempted else (" lc-stale" if not edge.current else "")
        )
        + (" lc-via-column-lineage" if edge.via == "column_lineage" else "")
        for edge in picture.edges
    }
    for route in layout.routes:
        source, target = layout.boxes[route.source], layout.boxes[route.target]
        kind = _css_kind(route.kind)
        path = _curve(_route_points(route, source, target))
        classes = extra.get((route.source, route.target, route.kind), "")
        arrow = "lc-arrow-parent" if kind == "parent" else "lc-arrow"
        out.append(
            f'<path class="lc-edge lc-edge-{kind}{classes}" data-source="{escape(route.source)}" '
            f'data-target="{escape(route.target)}" d="{path}" '
            f'marker-end="url(#{arrow})"/>'
        )
    out.append("</g>")
    if picture.column_edges:
        out.append('<g class="lc-column-edges">')
        for edge in picture.column_edges:
            source_node, target_node = picture.nodes[edge.source], picture.nodes[edge.target]
            source, target = layout.boxes[edge.source], layout.boxes[edge.target]
            start = (source.x + source.w, _field_y(source, source_node, edge.source_field))
            classes = "lc-column-edge" + ("" if edge.current else " lc-stale")
            if edge.target_field:
                end = (target.x, _field_y(target, target_node, edge.target_field))
                tip = f"{edge.source_field} → {edge.target_field}"
            else:  # a dataset-level dependency: to the dataset's title
                end = (target.x, target.y + DATASET_HEIGHT / 2)
                tip = f"{edge.source_field} → the whole dataset"
                classes += " lc-dependency"
            if edge.transformation:
                tip += f" ({edge.transformation})"
            if not edge.current:
                tip += ", not in the job's latest completed run"
            out.append(
                f'<path class="{classes}" d="{_curve([start, end])}" '
                f'marker-end="url(#lc-arrow-col)"><title>{escape(tip)}</title></path>'
            )
        out.append("</g>")
    out.append('<g class="lc-nodes">')
    for ref, node in picture.nodes.items():
        out.append(_node(node, layout.boxes[ref]))
    out.append("</g></svg>")
    return mark_safe("".join(out))  # every text and attribute above is escaped

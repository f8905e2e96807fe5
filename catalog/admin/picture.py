"""The lineage picture in the admin: on dataset and job pages, and the Lineage explorer.

The controls are plain GET parameters (``lineage_depth``, ``lineage_direction``,
``lineage_columns``, ``lineage_as_of``, ``lineage_expand``), so every picture is a link a
steward can share. Bad values are named in a message beside the controls and the default
is drawn instead. See docs/admin.md and docs/adr/0047.
"""

from contextlib import suppress
from datetime import UTC, datetime
from typing import Any, ClassVar
from urllib.parse import urlencode

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, QueryDict
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.safestring import SafeString

from catalog.admin.search import MAX_TERM, search
from catalog.lineage import graph as lineage_reads
from catalog.lineage.request import NodeRef, UnknownNode
from catalog.picture.build import (
    MAX_DEPTH,
    MAX_EXPANSIONS,
    Controls,
    Expansion,
    build_picture,
)
from catalog.picture.layout import layout
from catalog.picture.svg import render_svg

PREFIX = "lineage_"
DIRECTIONS = ("both", "upstream", "downstream")


def parse_controls(query: QueryDict) -> tuple[Controls, list[str]]:
    """The picture's controls from a query string, and a message per refused value."""
    controls, errors = Controls(), []
    depth = query.get(PREFIX + "depth", "")
    if depth:
        if depth.isdigit() and 1 <= int(depth) <= MAX_DEPTH:
            controls.depth = int(depth)
        else:
            errors.append(f"Depth must be a whole number from 1 to {MAX_DEPTH}.")
    direction = query.get(PREFIX + "direction", "")
    if direction:
        if direction in DIRECTIONS:
            controls.direction = direction  # type: ignore[assignment]
        else:
            errors.append("Direction must be both, upstream or downstream.")
    controls.columns = query.get(PREFIX + "columns", "") in ("1", "on", "true")
    as_of = query.get(PREFIX + "as_of", "").strip()
    if as_of:
        moment = _moment(as_of)
        if moment is None:
            errors.append("As of must be an ISO 8601 date or date-time, e.g. 2026-11-01.")
        controls.as_of = moment
    for text in query.getlist(PREFIX + "expand")[:MAX_EXPANSIONS]:
        try:
            controls.expand.append(Expansion.parse(text))
        except ValueError:
            errors.append(f"Cannot expand {text[:60]!r}: expected e.g. dataset:12:upstream.")
    return controls, errors


def _moment(text: str) -> datetime | None:
    """As the read API's ``as_of``: a date is its midnight, zone-less times are UTC."""
    try:
        value = parse_datetime(text)
        if value is None:
            day = parse_date(text)
            value = datetime(day.year, day.month, day.day) if day else None
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if timezone.is_naive(value) else value.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _query(base: QueryDict, **changes: Any) -> str:
    """``base``'s picture parameters with ``changes`` applied, as a query string."""
    params: list[tuple[str, str]] = [
        (key, value)
        for key in base
        if key.startswith(PREFIX) or key == "node"
        for value in base.getlist(key)
        if key.removeprefix(PREFIX) not in changes and value != ""
    ]
    for key, value in changes.items():
        for item in value if isinstance(value, list) else [value]:
            params.append((key if key == "node" else PREFIX + key, str(item)))
    return urlencode(params)


def render_picture(request: HttpRequest, root: NodeRef, path: str) -> SafeString:
    """The controls, the SVG and what was cut, for the node ``root`` on the page ``path``."""
    controls, errors = parse_controls(request.GET)
    expanded = [str(expansion) for expansion in controls.expand]

    def expand_link(expansion: Expansion) -> str:
        more = [*expanded, str(expansion)][-MAX_EXPANSIONS:]
        return f"{path}?{_query(request.GET, expand=more)}#lineage-picture"

    picture = build_picture(root, controls, expand_link, lineage_reads)
    placed = layout(picture)
    focus = picture.nodes.get(str(root))
    label = f"Lineage of {focus.label if focus else root}"
    context = {
        "svg": render_svg(picture, placed, label),
        "picture": picture,
        "layout": placed,
        "controls": controls,
        "errors": errors,
        "depths": range(1, MAX_DEPTH + 1),
        "directions": DIRECTIONS,
        "path": path,
        "root": str(root),
        "as_of_text": request.GET.get(PREFIX + "as_of", ""),
        "expanded": expanded,
        "collapse_url": f"{path}?{_query(request.GET, expand=[])}#lineage-picture",
        "api_url": f"/api/v1/lineage/graph?node={root}&depth={controls.depth}"
        f"&direction={controls.direction}",
        "counts": {
            "datasets": sum(node.kind == "dataset" for node in picture.nodes.values()),
            "jobs": sum(node.kind == "job" for node in picture.nodes.values()),
            "markers": sum(node.kind == "more" for node in picture.nodes.values()),
        },
    }
    return render_to_string("admin/catalog/lineage/picture.html", context, request=request)


# The picture names datasets and jobs alike: it is drawn only for a user who may view both.
PICTURE_PERMISSIONS = ("catalog.view_dataset", "catalog.view_job")
NO_PICTURE = (
    '<p class="help" id="lineage-picture-hidden">The lineage picture shows jobs and datasets: '
    "it needs permission to view both.</p>"
)


def may_see_picture(request: HttpRequest) -> bool:
    return bool(request.user.has_perms(PICTURE_PERMISSIONS))


class LineagePictureMixin:
    """For the dataset and job ModelAdmins: the picture above the page's fields."""

    lineage_kind = "dataset"
    change_form_template: ClassVar[Any] = "admin/catalog/lineage/change_form.html"

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra = dict(extra_context or {})
        if not may_see_picture(request):
            extra["lineage_picture"] = SafeString(NO_PICTURE)
        elif object_id.isdigit() and 0 < int(object_id) < 2**63:
            root = NodeRef(self.lineage_kind, int(object_id))  # type: ignore[arg-type]
            # An unknown id: no picture; the admin's own "does not exist" handling follows.
            with suppress(UnknownNode):
                extra["lineage_picture"] = render_picture(request, root, request.path)
        return super().change_view(request, object_id, form_url, extra)  # type: ignore[misc]


def explorer_view(request: HttpRequest) -> HttpResponse:
    """The Lineage explorer: find a dataset or job by any part of its name, see its picture."""
    if not may_see_picture(request):
        raise PermissionDenied
    term = request.GET.get("q", "").strip()[:MAX_TERM]
    status, problem, picture = 200, "", None
    node_text = request.GET.get("node", "")
    if node_text:
        try:
            picture = render_picture(request, NodeRef.parse(node_text), request.path)
        except ValueError as error:
            status, problem = 400, f"node: {error} (e.g. dataset:12 or job:7)."
        except UnknownNode:
            status, problem = 404, f"There is no {node_text}."
    hits = search(term) if term else []
    context = {
        **admin.site.each_context(request),
        "title": "Lineage explorer",
        "term": term,
        "hits": hits,
        "node": node_text,
        "problem": problem,
        "lineage_picture": picture,
    }
    return TemplateResponse(request, "admin/catalog/lineage/explorer.html", context, status=status)

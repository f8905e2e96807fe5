"""``/favicon.ico``: the icon browsers ask every site for (a 404 in the log of every first
visit otherwise). Pages name the SVG one (``<link rel=icon>``); this answers the rest."""

from functools import cache
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

ICON = Path(__file__).resolve().parents[1] / "static" / "catalog" / "favicon.ico"


@cache
def _icon() -> bytes:
    return ICON.read_bytes()  # 236 bytes, read once per process


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_icon(), content_type="image/x-icon")
    response["Cache-Control"] = "public, max-age=86400"
    return response

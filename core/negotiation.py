"""Content negotiation whose unknown ``?format=`` is a bad parameter, not a missing page, and
whose choice for a request's Accept header is made once per process.

DRF's ``DefaultContentNegotiation`` raises ``Http404`` when ``?format=`` names no renderer
of the view, so a client that mistypes ``csv`` is told the resource does not exist. This
answers it as what it is: a 400 problem naming the parameter and the formats the view has.

DRF parses the Accept header into media types on every request and matches them against
each renderer's: 20-100 µs of every read (ADR 0123), for a choice that depends on nothing
but the view's renderer classes, the header's text and ``?format=``. The first request with
those three is negotiated by DRF; later ones get the same renderer and media type from
``_chosen``. A request DRF refuses (406, an unknown format) is negotiated, and refused,
every time. The remembered choices are bounded: a header seen after the bound, or longer
than ``MAX_ACCEPT``, is negotiated by DRF as before.
"""

from collections.abc import Iterable
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer

MAX_CHOICES = 256
MAX_ACCEPT = 200
_chosen: dict[tuple[Any, ...], tuple[int, str]] = {}


class ProblemContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Any, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        accept = request.META.get("HTTP_ACCEPT")
        key = (
            tuple(type(renderer) for renderer in renderers),
            accept,
            format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE),
        )
        chosen = _chosen.get(key)
        if chosen is not None:
            return renderers[chosen[0]], chosen[1]
        renderer, media_type = super().select_renderer(request, renderers, format_suffix)
        if len(_chosen) < MAX_CHOICES and (accept is None or len(accept) <= MAX_ACCEPT):
            index = next(i for i, candidate in enumerate(renderers) if candidate is renderer)
            _chosen[key] = (index, media_type)  # a dict's item set is atomic under the GIL
        return renderer, media_type

    def filter_renderers(
        self, renderers: Iterable[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        renderers = list(renderers)
        kept = [renderer for renderer in renderers if renderer.format == format]
        if kept:
            return kept
        # Imported here: core.problems imports DRF's views, which load this class.
        from core.problems import FieldError, Problem

        known = sorted({str(renderer.format) for renderer in renderers})
        message = f"unknown format; this resource has {' or '.join(known)}."
        raise Problem(
            status=400,
            slug="invalid-request",
            title="The request is not valid",
            detail=f"`format`: {message}",
            errors=[FieldError("/format", message)],
        )

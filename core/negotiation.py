"""Content negotiation whose unknown ``?format=`` is a bad parameter, not a missing page.

DRF's ``DefaultContentNegotiation`` raises ``Http404`` when ``?format=`` names no renderer
of the view, so a client that mistypes ``csv`` is told the resource does not exist. This
answers it as what it is: a 400 problem naming the parameter and the formats the view has.
"""

from collections.abc import Iterable

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer


class ProblemContentNegotiation(DefaultContentNegotiation):
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

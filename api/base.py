"""The base of every read endpoint: authentication, permission, throttling, pagination.

Viewsets stay a few lines (queryset, serializer, filterset), as in NetBox's
``NetBoxModelViewSet``: everything shared lives here.
"""

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from rest_framework import authentication, viewsets
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission, OperandHolder, SingleOperandHolder
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle
from rest_framework.views import APIView

from api.access import sees_retired
from api.filters import FilterBackend
from api.pagination import CursorPage, invalid_cursor
from api.params import nul_parameter
from api.problems import bad_parameter
from catalog.models import RetirableQuerySet
from ingest.authentication import BearerTokenAuthentication, HasReadScope


class ReadRateThrottle(ScopedRateThrottle):
    """DRF's scoped throttle, off unless ``DEFAULT_THROTTLE_RATES["read"]`` is configured.

    ``ScopedRateThrottle`` raises ``ImproperlyConfigured`` for a scope without a rate; the
    read API is unthrottled by default (one trusted UI), so a missing rate means "no limit".
    """

    scope_attr = "throttle_scope"

    def get_rate(self) -> str | None:
        if self.scope is None:  # set by allow_request before any rate is looked up
            return None
        rates: dict[str, str | None] = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES") or {}
        return rates.get(self.scope)

    def get_cache_key(self, request: Any, view: Any) -> str:
        # Per token (TokenPrincipal has no pk) or per user; anonymous requests never get here.
        user = request.user
        ident = f"token-{user.token_id}" if hasattr(user, "token_id") else f"user-{user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Any, view: Any) -> bool:
        self.scope = getattr(view, self.scope_attr, None) or ""
        if not self.scope or not self.get_rate():
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super(ScopedRateThrottle, self).allow_request(request, view)


class ReadAccessMixin:
    """Read token (``Authorization: Bearer``) or a logged-in staff session."""

    authentication_classes: Sequence[type[BaseAuthentication]] = [
        BearerTokenAuthentication,
        authentication.SessionAuthentication,
    ]
    permission_classes: Sequence[type[BasePermission] | OperandHolder | SingleOperandHolder] = [
        HasReadScope
    ]
    throttle_classes: Sequence[type[BaseThrottle]] = [ReadRateThrottle]
    throttle_scope = "read"

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        # After authentication: a NUL in any path or query parameter is a 400 here, for
        # every read endpoint, instead of a database error wherever the value is used.
        if (name := nul_parameter(request.query_params, kwargs)) is not None:
            if name == "cursor":  # the cursor's own problem, as every forged cursor gets
                raise invalid_cursor()
            raise bad_parameter(name, "NUL characters are not allowed.")


class ReadAPIView(ReadAccessMixin, APIView):
    """A read endpoint that is not a model list (graph, search, stats, export)."""


class ReadOnlyViewSet(ReadAccessMixin, viewsets.ReadOnlyModelViewSet):
    """List + detail over one model; subclasses set queryset, serializers and filterset.

    ``select_related``/``prefetch_related`` belong in ``queryset`` (list) and
    ``detail_queryset`` (detail, usually richer): the pinned query counts in
    tests/api prove there is no N+1.
    """

    pagination_class = CursorPage
    filter_backends = [FilterBackend]
    detail_queryset: Any = None
    detail_serializer_class: Any = None

    def get_queryset(self) -> Any:
        if self.action == "retrieve" and self.detail_queryset is not None:
            detail = self.detail_queryset.all()
            if isinstance(detail, RetirableQuerySet) and not self.sees_retired():
                return detail.current()
            return detail
        return super().get_queryset()

    def sees_retired(self) -> bool:
        """Whether this request's detail finds what is retired: by id, what is retired
        answers only those who may restore it (ADR 0078)."""
        return sees_retired(self.request.user, self.detail_queryset.model)

    def get_serializer_class(self) -> Any:
        if self.action == "retrieve" and self.detail_serializer_class is not None:
            return self.detail_serializer_class
        return super().get_serializer_class()

    def filter_queryset(self, queryset: Any) -> Any:
        # A detail is found by its id alone: the list's filters do not narrow it, and
        # building their filterset (django-filter copies every filter) is CPU for nothing.
        if self.action == "retrieve":
            return queryset
        return super().filter_queryset(queryset)

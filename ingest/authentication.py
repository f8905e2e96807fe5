"""Bearer-token authentication and scope permissions, shared by the ingest and read APIs.

Tokens are looked up by the sha256 of the presented secret (the only thing stored), so the
comparison is an index equality on a hash, not a character-by-character compare of the
secret. Resolved tokens are cached per process for a few seconds to keep the ingest path to
one INSERT; a revocation therefore takes effect within ``_CACHE_SECONDS``. ``last_used_at``
is written at most once a minute per token, in all processes (each lookup reads it from the
row), but for lookups whose caches miss at the same moment, which may each write it.
"""

import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions
from rest_framework.request import Request

from core.body_reads import TOKEN
from core.problems import BEARER_CHALLENGE
from ingest.models import ApiToken, TokenScope
from ingest.services import hash_token

_CACHE_SECONDS = 5.0
_LAST_USED_EVERY = timedelta(seconds=60)
# Known tokens and unknown ones are cached apart, each bounded: a flood of made-up tokens
# evicts only other made-up tokens, never the valid ones every producer sends.
_MAX_KNOWN = 10_000
_MAX_UNKNOWN = 10_000
_cache: dict[str, tuple[float, "TokenPrincipal"]] = {}
_unknown: dict[str, float] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class TokenPrincipal:
    """What ``request.user`` is for a token-authenticated request."""

    token_id: int
    name: str
    scope: str
    is_authenticated: bool = True
    is_staff: bool = False

    def __str__(self) -> str:
        return f"token:{self.name}"


def clear_token_cache() -> None:
    _cache.clear()
    _unknown.clear()


def _remember(cache: dict[str, Any], key: str, value: Any, limit: int) -> None:
    """Insert, evicting the oldest entry when full (dicts keep insertion order)."""
    with _lock:  # the web server's threads share the caches
        cache.pop(key, None)
        while len(cache) >= limit:
            cache.pop(next(iter(cache)), None)
        cache[key] = value


def _resolve(secret: str) -> TokenPrincipal | None:
    key_hash = hash_token(secret)
    now = time.monotonic()
    cached = _cache.get(key_hash)
    if cached is not None and cached[0] > now:
        return cached[1]
    unknown_until = _unknown.get(key_hash)
    if unknown_until is not None and unknown_until > now:
        return None
    token = (
        ApiToken.objects.active()
        .filter(key_hash=key_hash)
        .only("id", "name", "scope", "last_used_at")
        .first()
    )
    principal = None
    if token is not None:
        principal = TokenPrincipal(token.id, token.name, token.scope)
        moment = timezone.now()
        if token.last_used_at is None or moment - token.last_used_at > _LAST_USED_EVERY:
            ApiToken.objects.filter(id=token.id).update(last_used_at=moment)
    if principal is None:
        _cache.pop(key_hash, None)  # revoked since it was cached
        _remember(_unknown, key_hash, now + _CACHE_SECONDS, _MAX_UNKNOWN)
    else:
        _unknown.pop(key_hash, None)
        _remember(_cache, key_hash, (now + _CACHE_SECONDS, principal), _MAX_KNOWN)
    return principal


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>``; an unknown or revoked token is a 401."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[TokenPrincipal, str] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <token>'.")
        principal = _resolve(secret.strip())
        if principal is None:
            raise exceptions.AuthenticationFailed("The token is unknown or revoked.")
        # The sender whose body reads are counted together (core/body_reads.py, ADR 0197):
        # a verified token, before any body is read.
        request.META[TOKEN] = principal.token_id
        return principal, secret

    def authenticate_header(self, request: Request) -> str:
        return BEARER_CHALLENGE


class _ScopePermission(permissions.BasePermission):
    scope: str = ""
    message = "This token's scope does not allow this endpoint."

    def grants(self, user: object) -> bool:
        """Whether ``user`` is a token of this scope (the ingest fast path asks this too)."""
        return isinstance(user, TokenPrincipal) and user.scope == self.scope

    def has_permission(self, request: Request, view: object) -> bool:
        return self.grants(request.user)


class HasIngestScope(_ScopePermission):
    """Ingest endpoints: an ingest-scoped token (or none, when explicitly allowed for dev)."""

    scope = TokenScope.INGEST
    # Says which token the endpoint takes: a newcomer's first 403 is a read token (the
    # other one make run prints) used to send.
    message = (
        "This endpoint takes an ingest token (lc_ingest_...; make run prints one, or "
        "manage.py create_token --scope ingest): this token's scope does not allow it."
    )

    def has_permission(self, request: Request, view: object) -> bool:
        if request.user is None and settings.LINEAGE["ALLOW_ANONYMOUS_INGEST"]:
            return True
        if request.user is None:
            raise exceptions.NotAuthenticated("An ingest token is required.")
        return super().has_permission(request, view)


def session_may_read(user: Any, needed: tuple[str, ...] | None) -> bool:
    """Whether a logged-in session of ``user`` reads what needs ``needed``: staff holding
    every one of them (None: nothing a session may read). The one rule of the read API's
    sessions (HasReadScope) and of every page that shows what it answers (the front page's
    figures are /api/v1/stats', catalog.reads.stats.may_read)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    if not getattr(user, "is_staff", False):
        return False
    return needed is not None and bool(user.has_perms(needed))


def read_permissions(view: object) -> tuple[str, ...] | None:
    """The Django permissions a session needs to read what ``view`` answers.

    The view says (``read_permissions``: ``("catalog.view_job", ...)``), or its queryset's
    model does (``view_<model>``); None when neither does, and such a view is closed to
    sessions: a new read endpoint cannot forget to ask.
    """
    declared = getattr(view, "read_permissions", None)
    if getattr(view, "action", None) == "retrieve":
        declared = getattr(view, "detail_read_permissions", None) or declared
    if declared is not None:
        return tuple(declared)
    queryset = getattr(view, "queryset", None)
    if queryset is None:
        return None
    meta = queryset.model._meta
    return (f"{meta.app_label}.view_{meta.model_name}",)


class HasReadScope(_ScopePermission):
    """Read endpoints: a read-scoped token, or a staff session holding the view permissions
    of what the endpoint shows (``read_permissions``; the steward and reader groups of
    catalog/permissions.py have them). A token's read scope reads everything, as before."""

    scope = TokenScope.READ
    message = (
        "This endpoint takes a read token (lc_read_...; make run prints one, or manage.py "
        "create_token --scope read) or a staff session holding the view permissions of what "
        "it shows: this token's scope, or this user's permissions, do not allow it."
    )

    def has_permission(self, request: Request, view: object) -> bool:
        user = request.user
        if user is None or not getattr(user, "is_authenticated", False):
            raise exceptions.NotAuthenticated("A read token or a staff session is required.")
        if isinstance(user, TokenPrincipal):
            return super().has_permission(request, view)
        return session_may_read(user, read_permissions(view))

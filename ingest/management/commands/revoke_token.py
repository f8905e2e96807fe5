"""manage.py revoke_token TOKEN: revoke a token named by its id, the token itself, its
prefix or its name.

The token itself is what an operator holds after a leak, so it is matched exactly (by its
hash, as authentication does); a prefix is the part shown in the admin (``lc_ingest_`` or
``lc_read_`` and four more characters, ``ApiToken.prefix``) or any longer start of the token.
More than one token matching a prefix or a name is refused with the candidates listed, so
that a guess never revokes the wrong token; the secret is never echoed back. A name that
reads as an id or a prefix counts as a name too: a token so named is a candidate beside
the token of that id or prefix.
"""

import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import F, Q

from ingest.models import ApiToken, TokenScope
from ingest.services import hash_token, revoke_token

# secrets.token_urlsafe(32) is 43 characters (ingest.services.create_token).
SECRET_LENGTH = 43
SHOWN_CANDIDATES = 10
# Where a token starts in whatever was pasted: ``Bearer lc_ingest_…`` (the header's value)
# or the token in quotes holds one too, and is a "name" that matches nothing.
_TOKEN_START = re.compile("lc_(?:" + "|".join(map(re.escape, TokenScope.values)) + ")_")


def _scope_of(text: str) -> str | None:
    for scope in TokenScope.values:
        if text.startswith(f"lc_{scope}_"):
            return scope
    return None


def _prefix_length(scope: str) -> int:
    return len(scope) + 8  # as create_token stores it: "lc_", the scope, "_", 4 characters


def _shown(text: str) -> str:
    """What the messages may repeat of the argument: never more than a prefix of a token,
    wherever in it the token starts (``Bearer lc_ingest_…`` was echoed whole, as a name)."""
    start = _TOKEN_START.search(text)
    if start is None:
        return text
    end = start.end() + 4  # the prefix the admin shows: its scope's and four characters
    return f"{text[:end]}…" if len(text) > end else text


def _describe(token: ApiToken) -> str:
    state = "" if token.is_active else ", revoked"
    return f"#{token.id} {token.name!r} ({token.scope}, {token.prefix}…{state})"


class Command(BaseCommand):
    help = "Revoke an API token, named by its id, the token itself, its prefix or its name."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "token",
            help="Token id, the token itself, its prefix (e.g. lc_ingest_AbC1) or its name.",
        )

    def handle(self, *args: Any, token: str, **options: Any) -> None:
        found = self._matching(token.strip())
        if len(found) > 1:
            # Several tokens with one prefix or name: the active ones are what revoking means.
            found = [candidate for candidate in found if candidate.is_active] or found[:1]
        if len(found) > 1:
            listed = "; ".join(_describe(candidate) for candidate in found[:SHOWN_CANDIDATES])
            many = len(found) > SHOWN_CANDIDATES
            count = f"More than {SHOWN_CANDIDATES}" if many else str(len(found))
            raise CommandError(
                f"{count} active tokens match {_shown(token)!r}: {listed}{'; …' if many else ''}. "
                "Revoke one by its id (or its prefix, when a name is the id of another)."
            )
        (chosen,) = found
        if not revoke_token(chosen.id):
            raise CommandError(f"Token {_describe(chosen)} is already revoked.")
        self.stdout.write(f"Revoked token {_describe(ApiToken.objects.get(id=chosen.id))}.")

    def _matching(self, text: str) -> list[ApiToken]:
        if not text:
            raise CommandError("Name the token: its id, the token itself, its prefix or its name.")
        # A name may read as an id ("2026") or a prefix ("lc_ingest_backup"): then the token
        # of that name is a candidate beside the other reading, never passed over for it
        # (an id alone revoked whichever token had that id, the leaked one kept working).
        named = Q(name=text)
        # ASCII digits only: "²" is a digit to str.isdigit and not to int() (a traceback).
        if text.isascii() and text.isdigit():
            return self._or_none(ApiToken.objects.filter(Q(id=int(text)) | named), text, "id")
        by_secret = list(ApiToken.objects.filter(key_hash=hash_token(text)))
        if by_secret:
            return by_secret
        scope = _scope_of(text)
        if scope is None:
            return self._or_none(ApiToken.objects.filter(named), text, "name")
        length = _prefix_length(scope)
        if ApiToken.objects.filter(named).exists():
            whole = len(text) >= length - 4 + SECRET_LENGTH
            prefixed = Q(prefix=text[:length]) if length <= len(text) and not whole else Q(pk=None)
            return self._or_none(ApiToken.objects.filter(named | prefixed), text, "name")
        if len(text) < length:
            raise CommandError(
                f"{text!r} is shorter than a token's prefix ({length} characters for "
                f"{scope} tokens, as the admin shows it): give more of the token."
            )
        same_prefix = ApiToken.objects.filter(prefix=text[:length])
        if len(text) >= length - 4 + SECRET_LENGTH:
            # A whole token that authenticates nothing: it was not issued here (or not by this
            # database), or it is mistyped. A token that merely shares its prefix is not it.
            hint = "; ".join(_describe(candidate) for candidate in same_prefix[:SHOWN_CANDIDATES])
            raise CommandError(
                f"No token is this secret ({_shown(text)!r}): it was not issued by this "
                "database or it is mistyped."
                + (f" Tokens with the same prefix, revocable by id: {hint}." if hint else "")
            )
        return self._or_none(same_prefix, text, "prefix")

    @staticmethod
    def _or_none(matches: Any, text: str, kind: str) -> list[ApiToken]:
        # Active tokens first: when several match, they are the candidates.
        ordered = matches.order_by(F("revoked_at").asc(nulls_first=True), "id")
        found = list(ordered[: SHOWN_CANDIDATES + 1])
        if not found:
            raise CommandError(
                f"No token has the {kind} {_shown(text)!r}. Name a token by its id, the token "
                "itself, its prefix (e.g. lc_ingest_AbC1) or its name, as the admin lists them."
            )
        return found

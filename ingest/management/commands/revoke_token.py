"""manage.py revoke_token ID_OR_PREFIX: revoke a token."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import ApiToken
from ingest.services import revoke_token


class Command(BaseCommand):
    help = "Revoke an API token, by id or by the prefix shown in the admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("token", help="Token id or prefix (e.g. lc_ingest_AbC1).")

    def handle(self, *args: Any, token: str, **options: Any) -> None:
        matches = (
            ApiToken.objects.filter(id=int(token))
            if token.isdigit()
            else (
                ApiToken.objects.filter(prefix=token[:16])
                if len(token) >= 8
                else ApiToken.objects.none()
            )
        )
        found = list(matches[:2])
        if len(found) != 1:
            raise CommandError(f"No single token matches {token!r} ({len(found)} found).")
        if not revoke_token(found[0].id):
            raise CommandError(f"Token {found[0]} is already revoked.")
        self.stdout.write(f"Revoked {found[0]}.")

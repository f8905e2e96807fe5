"""manage.py create_token --scope ingest|read|curate [--name NAME]: print a new token once."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest.models import ApiToken, TokenScope
from ingest.services import create_token


class Command(BaseCommand):
    help = "Create an API token and print it. Only its hash is stored: copy it now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--scope",
            required=True,
            choices=TokenScope.values,
            help=(
                "ingest: send events (producers); read: the read APIs; curate: retire and tag "
                "through the Marquez mount (docs/security.md)."
            ),
        )
        parser.add_argument("--name", default="", help="What the token is for (shown in admin).")
        parser.add_argument("--quiet", action="store_true", help="Print only the token.")

    def handle(self, *args: Any, scope: str, name: str, quiet: bool, **options: Any) -> None:
        longest = ApiToken._meta.get_field("name").max_length or 0
        if len(name) > longest or "\x00" in name:
            # Refused here, not by PostgreSQL: that was a DataError traceback.
            raise CommandError(f"--name must be at most {longest} characters, without NUL")
        token, secret = create_token(name or f"{scope} token", scope)
        if quiet:
            self.stdout.write(secret)
            return
        self.stdout.write(f"Created {scope} token #{token.id} {token.name!r}. It is shown once:")
        self.stdout.write(secret)

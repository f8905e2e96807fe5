"""``manage.py rederive [--since TIME]``: rebuild the catalog from the raw event log."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.services.derivation.batch import BatchResult
from catalog.services.derive import rederive
from core.command_output import RedactedOutput
from core.timestamps import parse_timestamp


class Command(RedactedOutput, BaseCommand):
    # Prints derivation errors, which quote producer text: redacted like logs (ADR 0074).
    help = (
        "Rebuild the catalog from the event log. Without --since: empty the derived tables "
        "and derive every event again (the state a clean derivation gives). With --since: "
        "derive again the events from that eventTime on, and the whole runs they belong to."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--since", help="ISO 8601 eventTime; only events from then on")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=500,
            help="Events derived in one transaction (default 500).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        since = None
        # "is not None": --since "" (a script's unset variable) was taken as no --since at
        # all, and emptied the whole catalog instead of deriving a range again.
        if options["since"] is not None:
            since = parse_timestamp(options["since"])
            if since is None:
                raise CommandError(f"--since {options['since']!r} is not an ISO 8601 time")

        if options["batch_size"] < 1:
            # Checked before anything is emptied: 0 used to truncate the catalog and derive
            # nothing (claimed 0, exit 0), a negative size to truncate it and then fail.
            raise CommandError(f"--batch-size must be 1 or more (got {options['batch_size']})")
        verbosity = options["verbosity"]

        def progress(total: BatchResult) -> None:
            if verbosity >= 2:
                self.stdout.write(f"derived {total.derived} failed {total.failed}")

        total = rederive(since=since, batch_size=options["batch_size"], progress=progress)
        self.stdout.write(
            f"rederive: claimed {total.claimed}, derived {total.derived}, failed {total.failed}"
        )
        for event_id, error in sorted(total.errors.items())[:20]:
            self.stdout.write(f"  event {event_id}: {error}")

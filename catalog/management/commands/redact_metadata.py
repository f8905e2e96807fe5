"""``manage.py redact_metadata``: redact again the additionalValues of metadata records
derived before their keys were redacted (catalog.services.metadata_keys, ADR 0187).
Migration 0041 runs it once; run it again to resume one that stopped (``--after``, the
last id it printed), after an upgrade whose old pods derived during the migration, or
after changing ``LINEAGE_REDACT_KEYS`` (cheaper than a rederive for these rows)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.services import metadata_keys


class Command(BaseCommand):
    help = (
        "Redact the stored additionalValues of metadata records (keys and values) where "
        "redaction changes them, a span of ids per transaction; idempotent, resumable "
        "with --after."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--span", type=int, default=metadata_keys.SPAN, help="ids per step")
        parser.add_argument("--after", type=int, default=0, help="start past this record id")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["span"] < 1 or options["after"] < 0:
            raise CommandError("--span must be at least 1 and --after at least 0.")

        def progress(done: metadata_keys.Redacted) -> None:
            if options["verbosity"] >= 2:
                self.stdout.write(f"up to id {done.scanned_to}: {done.updated} redacted")

        done = metadata_keys.redact_stored(options["span"], options["after"], progress)
        self.stdout.write(
            f"redact_metadata: {done.updated} redacted, ids up to {done.scanned_to} looked "
            f"at in {done.spans} steps"
        )
        if done.unreadable:
            self.stdout.write(
                f"redact_metadata: {done.unreadable} records left as they are: their "
                "additionalValues hold a number outside a double's range, which "
                "derivation never writes"
            )

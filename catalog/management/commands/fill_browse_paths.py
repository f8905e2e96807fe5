"""``manage.py fill_browse_paths``: the browse paths of datasets derived before the catalog
read the hierarchy facet, without a rederive (catalog.services.browse_paths, ADR 0093).
Migration 0032 runs it once; run it again to resume one that stopped (``--after``, the
last id it printed) or after an upgrade whose old pods derived during the migration."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.services import browse_paths


class Command(BaseCommand):
    help = (
        "Fill Dataset.browse_path from the stored hierarchy facet where it is empty, a span "
        "of ids per transaction; idempotent, resumable with --after."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--span", type=int, default=browse_paths.SPAN, help="ids per step")
        parser.add_argument("--after", type=int, default=0, help="start past this dataset id")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["span"] < 1 or options["after"] < 0:
            raise CommandError("--span must be at least 1 and --after at least 0.")

        def progress(done: browse_paths.Filled) -> None:
            if options["verbosity"] >= 2:
                self.stdout.write(f"up to id {done.scanned_to}: {done.filled} filled")

        done = browse_paths.fill(options["span"], options["after"], progress)
        self.stdout.write(
            f"fill_browse_paths: {done.filled} filled, ids up to {done.scanned_to} looked at "
            f"in {done.spans} steps"
        )

"""``manage.py retention --days N [--dry-run]``: remove old events and runs, keep lineage."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.services.retention import BATCH_SIZE, MAX_DAYS, TIME_BUDGET, apply_retention


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise CommandError(f"--days {value!r} is not a whole number of days") from None
    if number < 1:
        raise CommandError(
            f"--days must be 1 or more (got {number}); to keep everything, do not run retention"
        )
    if number > MAX_DAYS:
        # Past it the cutoff is before year 1, which Python's dates cannot hold.
        raise CommandError(
            f"--days must be at most {MAX_DAYS} (got {number}); to keep everything, do not "
            "run retention"
        )
    return number


class Command(BaseCommand):
    help = (
        "Remove from the raw log every event received more than N days ago, and every run "
        "no event has been derived into since then, with its own rows. Lineage is kept: "
        "jobs, datasets and edges keep their first/last seen and counts (ADR 0079). "
        "Without --days, LINEAGE_RETENTION_DAYS."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--days", help="keep events received in the last N days (N >= 1)")
        parser.add_argument(
            "--dry-run", action="store_true", help="print what would be removed, change nothing"
        )
        parser.add_argument(
            "--batch-size", type=int, default=BATCH_SIZE, help="most rows per transaction"
        )
        parser.add_argument(
            "--time-budget",
            type=float,
            default=TIME_BUDGET,
            help="seconds a transaction may hold its locks; slower batches are halved",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["days"] is not None:
            days = _positive(options["days"])
        elif settings.LINEAGE["RETENTION_DAYS"]:
            days = settings.LINEAGE["RETENTION_DAYS"]
        else:
            raise CommandError("give --days N (LINEAGE_RETENTION_DAYS is not set)")
        if options["batch_size"] < 1:
            raise CommandError(f"--batch-size must be 1 or more (got {options['batch_size']})")
        if not options["time_budget"] > 0:
            raise CommandError(f"--time-budget must be above 0 (got {options['time_budget']})")
        result = apply_retention(
            days,
            dry_run=options["dry_run"],
            batch_size=options["batch_size"],
            time_budget=options["time_budget"],
        )
        verb = "would remove" if result.dry_run else "removed"
        self.stdout.write(
            f"retention (received before {result.cutoff.isoformat()}): {verb} "
            f"{result.events} events ({result.bytes} bytes) and {result.runs} runs in "
            f"{result.batches} transactions (slowest {result.slowest_batch:.2f} s, "
            f"smallest {result.smallest_batch} rows)"
        )
        if result.skipped:
            self.stdout.write(
                f"  {result.skipped} runs were being derived; the next run takes them"
            )

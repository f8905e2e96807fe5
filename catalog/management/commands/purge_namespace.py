"""``manage.py purge_namespace NS [--dry-run] [--by NAME]``: remove a namespace for good."""

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.services.purge import purge_namespace
from core.command_output import RedactedOutput


class Command(RedactedOutput, BaseCommand):
    help = (
        "Remove one namespace entirely, raw events included: every event that names it, "
        "everything derived from them, its steward input and dead letters; jobs of other "
        "namespaces that lose events, and datasets it named that have names elsewhere, are "
        "rebuilt from the rest (docs/deploy.md). Leaves an "
        "audit record (who, when, rows per table). --dry-run prints the counts only."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("namespace")
        parser.add_argument("--dry-run", action="store_true", help="count, change nothing")
        parser.add_argument("--by", default="", help="who asks (default: the OS user)")

    def handle(self, *args: Any, namespace: str, dry_run: bool, by: str, **options: Any) -> None:
        if not namespace.strip():
            raise CommandError("Name the namespace to purge.")
        # Bytes the shell passed that are not UTF-8 arrive as surrogate escapes, which no
        # query nor JSON carries: a traceback, for --by after everything was deleted, and
        # the audit record never written (ADR 0209).
        for what, text in (("namespace", namespace), ("--by", by)):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as error:
                raise CommandError(f"The {what} {text!r} is not UTF-8 text.") from error
        who = by or getpass.getuser()
        verbose = options["verbosity"] >= 2
        report = purge_namespace(
            namespace,
            who,
            dry_run=dry_run,
            progress=(lambda message: self.stdout.write(message)) if verbose else None,
        )
        verb = "would delete" if dry_run else "deleted"
        if not any(report.counts.values()):
            # A typo'd or differently spelled namespace ended in "done" and nothing more.
            self.stdout.write(
                f"no row names the namespace {namespace!r}: nothing to delete (names are "
                "matched as jobs and datasets spell them; /api/v1/namespaces lists them)"
            )
        for table, count in sorted(report.counts.items()):
            self.stdout.write(f"{verb} {count} row(s) of {table}")
        self.stdout.write(
            f"{'would rebuild' if dry_run else 'rebuilt'} {report.rebuilt_jobs} job(s) of other "
            f"namespaces and {report.rebuilt_datasets} dataset(s) with names elsewhere from "
            f"{report.rederived_events} event(s) they keep"
        )
        if report.left_pending:
            self.stdout.write(
                f"{report.left_pending} of them left pending (their derivation here failed for "
                "now): the worker's sweep derives them"
            )
        self.stdout.write(
            f"purge_namespace: {'dry run, nothing changed' if dry_run else f'done, by {who}'}"
        )

"""manage.py backfill PATH...: load events from files into the raw log, deduplicated.

Resumable: with ``--state FILE``, progress is kept in that file after every chunk, so an
interrupted run continues where it stopped. Without it no file is written anywhere (it used
to be ``.backfill-state.json`` in whatever the working directory was, left behind untracked):
a run started again reads everything again, and because ingest is idempotent it stores
nothing twice (it counts those events as duplicates).

Its report quotes the events (refusal reasons, facet problems): what it writes is redacted
like an answer (core/command_output.py).
"""

import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.command_output import RedactedOutput
from core.problems import Problem
from ingest.backfill import Item, Progress, StateFile, StateFileError, event_files, read_items
from ingest.services import SerialisedEvent, oversized, record_events, serialise
from ingest.validation import validate_openlineage


def _reason(problem: Problem) -> str:
    if problem.errors:
        first = problem.errors[0]  # the event's own (path ""): its message alone
        return f"{first.path}: {first.message}" if first.path else first.message
    return problem.detail or problem.title


class Command(RedactedOutput, BaseCommand):
    help = "Load OpenLineage events from JSON, JSON-array, NDJSON or gzipped files or folders."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--chunk-size", type=int, default=1000)
        parser.add_argument(
            "--state",
            type=Path,
            default=None,
            help="Progress file that makes an interrupted backfill resumable (none if omitted).",
        )
        parser.add_argument("--restart", action="store_true", help="Ignore saved progress.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["chunk_size"] < 1:
            raise CommandError(f"--chunk-size must be 1 or more (got {options['chunk_size']})")
        try:
            files = event_files(options["paths"])
        except FileNotFoundError as error:
            raise CommandError(str(error)) from error
        if options["state"] is not None and options["state"] not in options["paths"]:
            # A state file kept in a folder of exports is not one of its events (one named
            # as both is refused below, as a state file that is not one).
            files = [file for file in files if file.resolve() != options["state"].resolve()]
        if not files:
            raise CommandError("No event files found (*.json, *.ndjson, *.jsonl, *.gz).")
        try:
            state = StateFile(options["state"], restart=options["restart"])
        except (OSError, StateFileError) as error:
            raise CommandError(str(error)) from error
        progress = Progress()
        started = time.monotonic()
        for file in files:
            if state.is_done(file):
                self.stdout.write(f"skip {file} (done in an earlier run)")
                continue
            self._load(file, state, progress, options["chunk_size"], started)
            state.finish(file)
        self._report(progress, time.monotonic() - started)

    def _load(
        self, file: Path, state: StateFile, progress: Progress, chunk_size: int, started: float
    ) -> None:
        skip = state.resume_offset(file)
        if skip:
            self.stdout.write(f"resume {file} after {skip} events")
        chunk: list[SerialisedEvent] = []
        chunk_bytes = 0
        # A chunk is stored once it holds chunk_size events or one event's worth of bytes:
        # 1,000 events of up to MAX_EVENT_BYTES each would otherwise be held at once.
        budget = settings.LINEAGE["MAX_EVENT_BYTES"]
        offset = 0
        for item in read_items(file):
            offset += 1
            if offset <= skip:
                continue
            record = self._validate(item, progress)
            if record is not None:
                chunk.append(record)
                chunk_bytes += record.size
            if len(chunk) >= chunk_size or chunk_bytes >= budget:
                self._store(chunk, progress)
                chunk, chunk_bytes = [], 0
                state.advance(file, offset)
                self._show(progress, started)
        self._store(chunk, progress)
        self._show(progress, started)

    def _validate(self, item: Item, progress: Progress) -> SerialisedEvent | None:
        if item.error is not None:
            progress.refuse(item.location, item.error)
            return None
        try:
            event = serialise(validate_openlineage(item.document))
        except Problem as problem:
            progress.refuse(item.location, _reason(problem))
            return None
        if oversized(event):  # the per-event limit of every ingest path
            limit = settings.LINEAGE["MAX_EVENT_BYTES"]
            progress.refuse(item.location, f"event larger than {limit} bytes")
            return None
        if event.record.warnings:
            # Stored all the same; the report groups problems by facet and message.
            progress.warn(
                item.location,
                sorted({f"{w.facet or w.path}: {w.message}" for w in event.record.warnings}),
            )
        return event

    def _store(self, chunk: list[SerialisedEvent], progress: Progress) -> None:
        for stored in record_events(chunk):
            if stored.created:
                progress.stored += 1
            else:
                progress.duplicate += 1

    def _show(self, progress: Progress, started: float) -> None:
        total = progress.stored + progress.duplicate + progress.refused
        rate = total / max(time.monotonic() - started, 1e-6)
        line = (
            f"\r{total} events: {progress.stored} stored, {progress.duplicate} duplicate, "
            f"{progress.refused} refused ({rate:,.0f}/s)"
        )
        if sys.stderr.isatty():
            sys.stderr.write(line)
            sys.stderr.flush()

    def _report(self, progress: Progress, elapsed: float) -> None:
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        self.stdout.write(
            f"stored {progress.stored}, duplicate {progress.duplicate}, "
            f"refused {progress.refused} in {elapsed:.1f}s"
        )
        for reason, count in sorted(progress.reasons.items(), key=lambda pair: -pair[1]):
            self.stdout.write(f"  refused {count}x: {reason} (e.g. {progress.examples[reason]})")
        if progress.with_warnings:
            self.stdout.write(
                f"{progress.with_warnings} stored with facet problems (kept as received; "
                "see the events' facet_problems)"
            )
        ranked = sorted(progress.warnings.items(), key=lambda pair: (-pair[1], pair[0]))
        for message, count in ranked[:20]:
            example = progress.warning_examples[message]
            self.stdout.write(f"  warning {count}x: {message} (e.g. {example})")

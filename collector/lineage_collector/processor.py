"""The worker side: turn queued hook tuples into OpenLineage events and hand them to sending.

Keeps, per open run, the union of what it read and wrote, so a job that runs several
queries (or fans them out to a pool) reports everything once in its COMPLETE event.
"""

import json
import time
from collections import OrderedDict
from typing import Any

from lineage_collector.aws import AthenaTracker, s3_lineage
from lineage_collector.config import Config
from lineage_collector.errors import counters, report
from lineage_collector.events import run_event
from lineage_collector.naming import (
    SQL_DIALECTS,
    DatasetName,
    Platform,
    platform_for_url,
    s3_uri_dataset,
    table_dataset,
)
from lineage_collector.records import AWS, END, EVENT, IO, SQL, START, JobRun
from lineage_collector.sql import SqlLineage, SqlParser
from lineage_collector.transport import Sender

_MAX_OPEN_RUNS = 10_000
# Datasets an open run collects for its COMPLETE (ADR 0157): per run and direction, by
# number and by their size in the event (below), which keeps one event under the catalog's
# 8 MiB, and over all open runs, which bounds the worker's memory whatever a long-lived run
# touches. Past any of them, a name is counted (datasets.dropped), not kept.
_MAX_RUN_DATASETS = 10_000
_MAX_TRACKED_DATASETS = 100_000
# And by their size in the event, per run and direction (ADR 0174): 10,000 names of an S3
# key's length (up to 1,024 characters, six bytes each in JSON when not ASCII) made a
# COMPLETE over the catalog's 8 MiB, refused whole. Two directions of 3 MiB leave room for
# the rest of the event (its error facet is capped at 16,000 characters, 96 kB at most).
_MAX_RUN_BYTES = 3 * 1024 * 1024
_MAX_PLATFORMS = 1_000


def event_bytes(name: DatasetName) -> int:
    """What ``name`` adds to an event's JSON: ``{"namespace":…,"name":…,"facets":{}},``."""
    return len(json.dumps(name.namespace)) + len(json.dumps(name.name)) + 36


class RunState:
    """What one open run has read and written so far (insertion-ordered, deduplicated)."""

    __slots__ = ("input_bytes", "inputs", "output_bytes", "outputs")

    def __init__(self) -> None:
        self.inputs: dict[DatasetName, None] = {}
        self.outputs: dict[DatasetName, None] = {}
        self.input_bytes = 0
        self.output_bytes = 0


class Processor:
    """Dispatches queue items; lives on the worker thread (no locks needed)."""

    def __init__(self, config: Config, transport: Any) -> None:
        self.config = config
        self.transport = transport
        self.sender = Sender(transport, config, counters)
        self.parser = SqlParser(
            max_chars=config.max_statement_chars,
            budget_per_second=config.parse_budget,
            counters=counters,
        )
        self.runs: OrderedDict[str, RunState] = OrderedDict()
        self.tracked = 0  # dataset names held by the open runs' states
        self.platforms: OrderedDict[Any, Platform] = OrderedDict()
        self.athena = AthenaTracker()
        self.flush_requested = False
        self._handlers = {
            START: self._start,
            END: self._end,
            SQL: self._sql,
            AWS: self._aws,
            IO: self._io,
            EVENT: self._event,
        }

    def fresh_copy(self) -> "Processor":
        """A new processor for a forked child: same configuration, no inherited state."""
        after_fork = getattr(self.transport, "after_fork", None)
        if after_fork is not None:
            after_fork()
        return Processor(self.config, self.transport)

    def close(self) -> None:
        """Release the transport's connection (keep-alive sockets hold server threads)."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()

    def idle(self, until: float | None = None) -> bool:
        return self.sender.idle(until)

    def sent_everything(self) -> bool:
        return self.sender.sent_everything()

    def maybe_send(self, now: float) -> None:
        self.sender.maybe_send(now, force=self.flush_requested)

    def handle(self, item: tuple[Any, ...]) -> None:
        self._handlers[item[0]](*item[1:])

    # -- run lifecycle ------------------------------------------------------------------------
    def _start(self, run: JobRun, moment: float) -> None:
        self.runs[run.run_id] = RunState()
        if len(self.runs) > _MAX_OPEN_RUNS:
            # A run that never ended (set_job without clear_job): forget the oldest.
            _, evicted = self.runs.popitem(last=False)
            self.tracked -= len(evicted.inputs) + len(evicted.outputs)
            counters.bump("runs.evicted")
        self._emit(run, "START", moment)

    def _end(self, run: JobRun, moment: float, error: BaseException | None) -> None:
        state = self.runs.pop(run.run_id, None) or RunState()
        self.tracked -= len(state.inputs) + len(state.outputs)
        self._emit(run, "FAIL" if error is not None else "COMPLETE", moment, state, error)

    def _emit(
        self,
        run: JobRun,
        event_type: str,
        moment: float,
        state: RunState | None = None,
        error: BaseException | None = None,
    ) -> None:
        event = run_event(
            event_type,
            run_id=run.run_id,
            namespace=run.namespace,
            name=run.name,
            moment=moment,
            inputs=list(state.inputs) if state else (),
            outputs=list(state.outputs) if state else (),
            parent=run.parent,
            upstream=run.upstream,
            error=error,
        )
        self.sender.add(event)

    def add(self, run: JobRun | None, inputs: Any = (), outputs: Any = ()) -> None:
        """Record datasets for ``run``; a run that already ended gets an OTHER event."""
        if run is None or not (inputs or outputs):
            return
        state = self.runs.get(run.run_id)
        if state is None:
            late = RunState()
            late.inputs.update(dict.fromkeys(inputs))
            late.outputs.update(dict.fromkeys(outputs))
            self._emit(run, "OTHER", time.time(), late)
            return
        state.input_bytes = self._keep(state.inputs, state.input_bytes, inputs)
        state.output_bytes = self._keep(state.outputs, state.output_bytes, outputs)

    def _keep(self, kept: dict[DatasetName, None], size: int, names: Any) -> int:
        """Add the new ``names`` within the bounds; the direction's size in the event after."""
        for name in names:
            if name in kept:
                continue
            grown = size + event_bytes(name)
            if (
                len(kept) >= _MAX_RUN_DATASETS
                or grown > _MAX_RUN_BYTES
                or self.tracked >= _MAX_TRACKED_DATASETS
            ):
                counters.bump("datasets.dropped")
                continue
            kept[name] = None
            size = grown
            self.tracked += 1
        return size

    # -- captures -----------------------------------------------------------------------------
    def _platform(self, engine: Any) -> Platform:
        # Keyed by URL, not by engine: holding engines kept every engine the host made (one
        # per tenant or per request) alive for good, with the connections of its pool.
        url = engine.url
        key: Any = url
        try:
            hash(key)
        except TypeError:  # a URL type that is not hashable
            key = repr(url)
        platform = self.platforms.get(key)
        if platform is not None:
            self.platforms.move_to_end(key)
            return platform
        platform = platform_for_url(url)
        self.platforms[key] = platform
        if len(self.platforms) > _MAX_PLATFORMS:
            self.platforms.popitem(last=False)
        return platform

    def _sql(self, run: JobRun, statement: str, engine: Any) -> None:
        platform = self._platform(engine)
        lineage = self.parser.parse(statement, SQL_DIALECTS.get(platform.scheme))
        if lineage:
            inputs, outputs = sql_datasets(lineage, platform)
            self.add(run, inputs, outputs)

    def _io(
        self, run: JobRun, inputs: tuple[DatasetName, ...], outputs: tuple[DatasetName, ...]
    ) -> None:
        self.add(run, inputs, outputs)

    def _event(self, event: dict[str, Any]) -> None:
        self.sender.add(event)

    def _aws(
        self, run: JobRun | None, operation: str, params: Any, response: Any, client: Any
    ) -> None:
        service = client.meta.service_model.service_name
        if service == "s3":
            inputs, outputs = s3_lineage(operation, params, self.config.capture_s3_metadata_calls)
            self.add(run, inputs, outputs)
        elif service == "athena":
            region = client.meta.region_name or "us-east-1"
            found = self.athena.observe(run, operation, params, response, region, self.parser)
            if found is not None:
                target, inputs, outputs = found
                self.add(target, inputs, outputs)


def sql_datasets(
    lineage: SqlLineage, platform: Platform
) -> tuple[list[DatasetName], list[DatasetName]]:
    """Name what a statement read and wrote on ``platform``."""
    inputs = [table_dataset(platform, table) for table in lineage.inputs]
    inputs += [s3_uri_dataset(uri, is_prefix=True) for uri in lineage.input_locations]
    outputs = [table_dataset(platform, table) for table in lineage.outputs]
    outputs += [s3_uri_dataset(uri, is_prefix=True) for uri in lineage.output_locations]
    return inputs, outputs


__all__ = ["Processor", "RunState", "report", "sql_datasets"]

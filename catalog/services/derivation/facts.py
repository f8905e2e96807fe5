"""Events → facts: a pure-Python reading of a batch of raw events (no database).

Every fact carries a *version*: ``(eventTime ISO, digest hex)`` of the event it came from,
so that the database merge can keep "the latest" or "the first" independently of the
order in which events arrive (see docs/derivation.md, "Order independence").
"""

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings

from catalog.facets import NOT_MERGED, job_type, lifecycle_state_change, lineage_catalog_edge
from catalog.facets import catalog_identity as catalog_facet
from catalog.facets import lineage as lineage_facet
from catalog.facets import parent as parent_facet
from catalog.facets import schema as schema_facet
from catalog.facets import symlinks as symlinks_facet
from catalog.models import writes
from catalog.names import naming
from catalog.names.rules import MatchBudgetSpent, RuleSet
from catalog.services.derivation import column_facts, control_edges, declarations, io_facets
from catalog.services.derivation.records import (
    EPOCH,
    NON_TERMINAL,
    REASON_RANK,
    TERMINAL,
    AliasFact,
    AliasKey,
    BadEvent,
    Facts,
    JobFact,
    JobKey,
    RawEvent,
    RunFact,
    Version,
    earliest,
    latest,
)
from catalog.services.derivation.skipped import without
from core.redaction import redact


def _merge_facets(
    into: dict[str, tuple[Version, Any]], facets: Any, version: Version, skip: Iterable[str] = ()
) -> None:
    if not isinstance(facets, dict):
        return
    for key, value in facets.items():
        if key in skip:
            continue
        current = into.get(key)
        if current is None or version > current[0]:
            into[key] = (version, value)


# An edge event's lineage_type is a short word (``direct``, ``model_scoring``); a longer one
# is cut, not refused (docs/derivation.md's facet table).
LINEAGE_TYPE_CHARS = 100


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


class Extractor:
    """Accumulates the facts of many events; ``add`` raises BadEvent for poison events."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self.facts = Facts()
        # A batch names the same few datasets and jobs again and again; normalising, rule
        # matching and credential stripping cost more than the rest of extraction, so each
        # distinct spelling is worked out once per batch (pure functions of the name).
        self._alias_keys: dict[tuple[str, str], tuple[AliasKey, list]] = {}
        self._job_keys: dict[tuple[str, str], JobKey] = {}
        # Experimental (ADR 0094): off, the ``lineage`` facet is kept as sent only.
        self.lineage_facet = settings.LINEAGE["EXPERIMENTAL_LINEAGE_FACET"]

    # --- names -------------------------------------------------------------------------

    def alias(
        self,
        namespace: Any,
        name: Any,
        event: RawEvent,
        reason: str,
        detail: str = "",
        rule_id: int | None = None,
    ) -> AliasKey:
        if not isinstance(namespace, str) or not isinstance(name, str) or not name.strip():
            raise BadEvent(f"dataset without a string namespace and name: {namespace!r} {name!r}")
        known = self._alias_keys.get((namespace, name))
        if known is None:
            key = self.rules.rewrite(*naming.normalise(namespace, name))
            known = self._alias_keys[(namespace, name)] = (key, self.rules.equivalents(*key))
        key, equivalents = known
        self._note_alias(key, event, reason, detail, rule_id)
        for rule, *target in equivalents:
            target_key = (target[0], target[1])
            self._note_alias(target_key, event, "rule", rule.slug, rule.id)
            self.link(key, target_key, "rule", event, rule.id)
        return key

    def _note_alias(
        self, key: AliasKey, event: RawEvent, reason: str, detail: str, rule_id: int | None
    ) -> None:
        time, digest = event.version
        candidate = ((REASON_RANK[reason], time, digest), reason, event.id, rule_id, detail)
        current = self.facts.aliases.get(key)
        if current is None:
            self.facts.aliases[key] = AliasFact(key, candidate, event.event_time, event.event_time)
            return
        if candidate[0] < current.reason[0]:
            current.reason = candidate
        current.first_seen = earliest(current.first_seen, event.event_time)
        current.last_seen = latest(current.last_seen, event.event_time)

    def try_alias(self, namespace: Any, name: Any, event: RawEvent, detail: str) -> AliasKey | None:
        """``alias`` for a name inside a facet: an unusable one is skipped, not poison."""
        try:
            return self.alias(namespace, name, event, "event", detail)
        except BadEvent:
            return None

    def link(
        self, a: AliasKey, b: AliasKey, reason: str, event: RawEvent, rule_id: int | None = None
    ) -> None:
        if a == b or self.rules.is_detached(*a) or self.rules.is_detached(*b):
            return  # a detached name (steward split) is joined to nothing
        pair = (a, b) if a < b else (b, a)
        self.facts.links.setdefault(pair, (reason, event.id, rule_id))

    def job(self, namespace: Any, name: Any, own: bool) -> JobFact:
        if not isinstance(namespace, str) or not isinstance(name, str) or not name:
            raise BadEvent(f"job without a string namespace and name: {namespace!r} {name!r}")
        # Credentials never reach the catalog (names are shown everywhere); else as sent.
        key = self._job_keys.get((namespace, name))
        if key is None:
            key = naming.job_name(namespace, name)
            self._job_keys[(namespace, name)] = key
        fact = self.facts.jobs.get(key)
        if fact is None:
            fact = self.facts.jobs[key] = JobFact(key, own)
        fact.own = fact.own or own
        return fact

    # --- events ------------------------------------------------------------------------

    def add(self, event: RawEvent) -> None:
        self.rules.start_event()  # one event's names share one matching budget
        try:
            self._add(event)
        except MatchBudgetSpent as error:
            raise BadEvent(str(error)) from error

    def _add(self, event: RawEvent) -> None:
        payload = event.payload
        if event.skipped_facets:
            payload = without(payload, event.skipped_facets)
        if not isinstance(payload, dict):
            raise BadEvent("payload is not an object")
        pairs: list[lineage_facet.Pair] = []
        if self.lineage_facet and event.kind in ("run", "job"):
            pairs = lineage_facet.pairs(payload)  # as sent: applied() rewrites the outputs
            payload = lineage_facet.applied(payload, replaces=event.kind == "job")
        if event.kind == "run":
            self._run_event(event, payload, pairs)
        elif event.kind == "job":
            self._job_event(event, payload, pairs)
        elif event.kind == "dataset":
            self._dataset_event(event, payload)
        elif event.kind == "edge":
            self._edge_event(event, payload)
        elif event.kind == "metadata":
            self._metadata_event(event, payload)
        else:
            raise BadEvent(f"unknown event kind {event.kind!r}")

    def _job_facts(self, event: RawEvent, job_payload: Any) -> JobFact:
        if not isinstance(job_payload, dict):
            raise BadEvent("job is not an object")
        job = self.job(job_payload.get("namespace"), job_payload.get("name"), own=True)
        job.times.append(event.event_time or EPOCH)
        _merge_facets(job.facets, job_payload.get("facets"), event.version)
        return job

    def _run_event(
        self, event: RawEvent, payload: dict[str, Any], pairs: list[lineage_facet.Pair]
    ) -> None:
        job = self._job_facts(event, payload.get("job"))
        run_payload = payload.get("run")
        if not isinstance(run_payload, dict) or not isinstance(run_payload.get("runId"), str):
            raise BadEvent("run without a string runId")
        run_id = run_payload["runId"]
        run = self._run(run_id, job.key, own=True, version=event.version)
        time = event.event_time or EPOCH
        run.first_event = earliest(run.first_event, time)
        run.last_event = latest(run.last_event, time)
        # Outside the spec's enum (stored with a warning): read as OTHER.
        event_type = payload.get("eventType")
        event_type = event_type.upper() if isinstance(event_type, str) else "OTHER"
        if event_type not in TERMINAL and event_type not in NON_TERMINAL:
            event_type = "OTHER"
        if event_type == "START":
            run.first_start = earliest(run.first_start, time)
        terminal = event_type in TERMINAL
        rank = TERMINAL.get(event_type, NON_TERMINAL.get(event_type, 0))
        state = (int(terminal), event.version[0], rank, event.version[1])
        if run.state is None or state > run.state:
            run.state, run.state_type, run.state_time = state, event_type, time
        # Streaming is a property of this event's own job facets (not of the batch's).
        streaming = job_type.is_streaming(payload["job"].get("facets"))
        run.streaming = run.streaming or streaming
        # So is the emission pattern: OR-merged, so any order of the events agrees.
        run.snapshots = run.snapshots or job_type.emits_snapshots(payload["job"].get("facets"))
        run_facets = run_payload.get("facets")
        _merge_facets(run.facets, run_facets, event.version)
        parent = parent_facet.reference(run_facets)
        if parent is not None:
            self._parent(event, run, job, *parent)
        control_edges.read_dependencies(self, event, run, job, run_facets)
        # The outputs a write event lists (a COMPLETE, a streaming job's RUNNING) are what
        # the run wrote; a START's are its plan (Airflow lists every table a DROP names),
        # attempted unless a write event names them too (catalog.models.writes).
        confirms = writes.is_write(event_type, streaming)
        for direction in ("inputs", "outputs"):
            self._io(
                event, payload.get(direction), direction[:-1], run=run, job=job, confirms=confirms
            )
        # The facet's per-target pairs (ADR 0102): its sources and targets are already the
        # event's inputs and outputs (lineage_facet.applied), so their names are known.
        for source, target in pairs:
            source_key = self.try_alias(*source, event, lineage_facet.NAME)
            target_key = self.try_alias(*target, event, lineage_facet.NAME)
            if source_key is not None and target_key is not None:
                self.span(self.facts.run_pairs, (run.key, source_key, target_key), time)

    def _run(self, run_id: str, job_key: JobKey, own: bool, version: Version) -> RunFact:
        run_uuid = naming.run_uuid(run_id, *job_key)
        job_version = ((int(own), version), job_key)
        fact = self.facts.runs.get((run_uuid, job_key))
        if fact is None:
            fact = RunFact(run_uuid, run_id, job_version, own)
            self.facts.runs[(run_uuid, job_key)] = fact
        elif job_version[0] > fact.job[0]:
            fact.job = job_version
        fact.own = fact.own or own
        if own and fact.run_id_text != run_id:
            fact.run_id_text = run_id
        return fact

    def _parent(
        self,
        event: RawEvent,
        run: RunFact,
        job: JobFact,
        namespace: str,
        name: str,
        parent_run_id: str | None,
    ) -> None:
        parent_fact = self.job(namespace, name, own=False)
        if (namespace, name) != job.key and (job.parent is None or event.version > job.parent[0]):
            job.parent = (event.version, parent_fact.key)
        if parent_run_id is not None:
            placeholder = self._run(parent_run_id, parent_fact.key, own=False, version=("", ""))
            if placeholder.key != run.key and (run.parent is None or event.version > run.parent[0]):
                run.parent = (event.version, placeholder.key)

    def _io(
        self,
        event: RawEvent,
        datasets: Any,
        direction: str,
        run: RunFact | None = None,
        job: JobFact | None = None,
        declared: bool = False,
        confirms: bool = False,
    ) -> None:
        if datasets is None:
            return
        if not isinstance(datasets, list):
            raise BadEvent(f"{direction}s is not an array")
        time = event.event_time or EPOCH
        for position, dataset in enumerate(datasets):
            if not isinstance(dataset, dict):
                raise BadEvent(f"{direction}s/{position} is not an object")
            key = self._dataset(event, dataset, direction, f"{direction}s/{position}")
            if run is not None:
                self.span(self.facts.run_datasets, (run.key, key, direction), time)
                self.facts.run_dataset_via[(run.key, key, direction)] = ""
                if confirms and direction == "output":
                    self.facts.confirmed_outputs.add((run.key, key, direction))
                    run.outputs_confirmed = True
                io_facets.read_io_facets(self.facts, event, run.key, key, direction, dataset)
                if direction == "output":
                    column_facts.read(self, event, run, key, dataset)
            if job is not None:
                job_key = (job.key, key, direction)
                first, last, was_declared = self.facts.job_datasets.get(
                    job_key, (time, time, False)
                )
                self.facts.job_datasets[job_key] = (
                    min(first, time),
                    max(last, time),
                    was_declared or declared,
                )

    @staticmethod
    def span(into: dict, key: Any, time: datetime) -> None:
        first, last = into.get(key, (time, time))
        into[key] = (min(first, time), max(last, time))

    def _dataset(self, event: RawEvent, dataset: dict[str, Any], role: str, path: str) -> AliasKey:
        key = self.alias(dataset.get("namespace"), dataset.get("name"), event, "event", path)
        self.facts.event_datasets.add((key, event.id, role))
        facets = dataset.get("facets")
        if isinstance(facets, dict):
            into = self.facts.dataset_facets.setdefault(key, {})
            _merge_facets(into, facets, event.version, skip=NOT_MERGED)
            self._schema(event, key, facets)
            self._symlinks(event, key, facets)
            self._catalog(event, key, dataset.get("name"), facets)
            self._rename(event, key, facets)
        return key

    def _schema(self, event: RawEvent, key: AliasKey, facets: dict[str, Any]) -> None:
        """Each schema the alias is sent with, at its earliest sighting: every event's, not
        only the newest (the facets keep that one), so consecutive versions are known
        whatever the batching (ADR 0082)."""
        fields = [[name, type_] for name, type_, _ in schema_facet.flattened(facets)]
        if not fields:
            return
        digest = hashlib.sha256(orjson.dumps(fields)).digest()
        known = self.facts.schemas.get((key, digest))
        if known is None or event.version < known[0]:
            self.facts.schemas[(key, digest)] = (event.version, event.id, fields)

    def _symlinks(self, event: RawEvent, key: AliasKey, facets: dict[str, Any]) -> None:
        for namespace, name, kind in symlinks_facet.identifiers(facets):
            detail = f"symlink {kind} of {key[0]} {key[1]}".strip()
            other = self.alias(namespace, name, event, "symlink", detail)
            self.facts.event_datasets.add((other, event.id, "symlink"))
            if symlinks_facet.is_table(kind):
                self.facts.table_names.add(other)
            self.link(key, other, "symlink", event)

    def _catalog(self, event: RawEvent, key: AliasKey, name: Any, facets: dict[str, Any]) -> None:
        """The catalog's name for the table, linked like a symlink (ADR 0093): the same
        table named by two engines in one catalog gets one such alias, so one dataset."""
        tables = [
            n for _, n, kind in symlinks_facet.identifiers(facets) if symlinks_facet.is_table(kind)
        ]
        for namespace, catalog_name in catalog_facet.identity(facets, name, tables):
            other = self.alias(namespace, catalog_name, event, "catalog", f"catalog of {key[1]}")
            self.link(key, other, "catalog", event)

    def _rename(self, event: RawEvent, key: AliasKey, facets: dict[str, Any]) -> None:
        previous = lifecycle_state_change.renamed_from(facets)
        if previous is not None:
            other = self.alias(*previous, event, "rename", f"renamed to {key[1]}")
            self.link(key, other, "rename", event)

    def _job_event(
        self, event: RawEvent, payload: dict[str, Any], pairs: list[lineage_facet.Pair]
    ) -> None:
        job = self._job_facts(event, payload.get("job"))
        for direction in ("inputs", "outputs"):
            self._io(event, payload.get(direction), direction[:-1], job=job, declared=True)
        declarations.read_declaration(self, event, job.key, payload, pairs)

    def _dataset_event(self, event: RawEvent, payload: dict[str, Any]) -> None:
        dataset = payload.get("dataset")
        if not isinstance(dataset, dict):
            raise BadEvent("dataset is not an object")
        self._dataset(event, dataset, "dataset", "dataset")

    def _edge_event(self, event: RawEvent, payload: dict[str, Any]) -> None:
        namespace, name, run_id = naming.split_pipeline(payload.get("pipeline"))
        job = self.job(namespace, name, own=True)
        time = event.event_time or EPOCH
        job.times.append(time)
        # An edge without a run in its pipeline is its own one-event run.
        run = self._run(run_id or f"edge:{event.digest.hex()}", job.key, True, event.version)
        run.first_event = earliest(run.first_event, time)
        run.last_event = latest(run.last_event, time)
        state = (1, event.version[0], TERMINAL["COMPLETE"], event.version[1])
        if run.state is None or state > run.state:
            run.state, run.state_type, run.state_time = state, "COMPLETE", time
        # Both are copied into LineageEdge's columns (the graph's ``lineage_types``, the
        # admin): producer text, stored redacted (ADR 0056, 0172); the pipeline names the
        # job, so it loses a URL's user info as the job's name does.
        edge_facet = lineage_catalog_edge.facet(
            naming.producer_text(payload.get("lineage_type"), LINEAGE_TYPE_CHARS),
            naming.without_credentials(_text(payload.get("pipeline"))),
        )
        _merge_facets(run.facets, edge_facet, event.version)
        keys = {}
        for role, column in (("input", "source_table"), ("output", "target_table")):
            table = payload.get(column)
            if not isinstance(table, str) or not table.strip():
                raise BadEvent(f"{column} is not a non-empty string")
            keys[role] = self.alias(*naming.edge_table(table), event, "edge", column)
            self.facts.event_datasets.add((keys[role], event.id, role))
            self.span(self.facts.run_datasets, (run.key, keys[role], role), time)
            self.facts.run_dataset_via[(run.key, keys[role], role)] = ""
            if role == "output":  # an edge event is its run's COMPLETE, naming the target
                self.facts.confirmed_outputs.add((run.key, keys[role], role))
                run.outputs_confirmed = True
            first, last, declared = self.facts.job_datasets.get(
                (job.key, keys[role], role), (time, time, False)
            )
            self.facts.job_datasets[(job.key, keys[role], role)] = (
                min(first, time),
                max(last, time),
                declared,
            )

    def _metadata_event(self, event: RawEvent, payload: dict[str, Any]) -> None:
        values = payload.get("additionalValues") or {}
        if not isinstance(values, dict):
            raise BadEvent("additionalValues is not an object")
        self.facts.metadata.append(
            {
                "event_id": event.id,
                # Shown by /metadata and matched by its filters: stored redacted (ADR 0056).
                "resource": naming.producer_text(payload.get("resource")),
                "subject": naming.producer_text(payload.get("subject")),
                "action": naming.producer_text(payload.get("action")),
                "timestamp": event.event_time or EPOCH,
                # Redacted too: its ?key=value filters match what is stored, so a raw value
                # would confirm a guess of the secret in it (a DSN's password, the value of
                # a name/value pair) that the answer itself hides.
                "additional_values": redact(values),
            }
        )


def extract(events: Iterable[RawEvent], rules: RuleSet) -> Facts:
    """All facts of ``events``; raises BadEvent naming the first poison event's problem."""
    extractor = Extractor(rules)
    for event in events:
        extractor.add(event)
    return extractor.facts

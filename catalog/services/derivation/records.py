"""The records derivation passes around: keys, the raw event, the facts read from events,
and what a facet reader may ask of the extractor (``Extractor``).

Pure Python, no database and no import of the readers: ``facts`` (the extractor) and each
facet reader (``column_facts``, ``declarations``, ``io_facets``) import this module and not
one another, so the readers can be read, and tested, one at a time.
"""

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, Protocol

from catalog.names import naming

Version = tuple[str, str]  # (eventTime as fixed-width ISO UTC, event digest hex)
JobKey = tuple[str, str]
AliasKey = tuple[str, str]
# A run is identified by its runId (as a UUID) *and* its job: two jobs sending the same
# runId (test fixtures, misconfigured producers) keep two runs (ADR 0028).
RunKey = tuple[uuid.UUID, JobKey]

TERMINAL = {"COMPLETE": 3, "FAIL": 5, "ABORT": 4}
# Ties on eventTime are broken by this rank (higher wins), then by digest.
NON_TERMINAL = {"RUNNING": 2, "START": 1, "OTHER": 0}
# Alias reasons, strongest first: an event naming a dataset beats a derived name.
REASON_RANK = {"event": 0, "edge": 0, "symlink": 1, "catalog": 1, "rename": 2, "rule": 3}

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def iso(moment: datetime | None) -> str:
    return (moment or EPOCH).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class BadEvent(ValueError):
    """The event's content cannot be derived (recorded as failed, never retried)."""


@dataclass(frozen=True)
class RawEvent:
    id: int
    kind: str
    event_type: str | None
    event_time: datetime | None
    run_id: str | None
    job_namespace: str | None
    job_name: str | None
    payload: Any
    digest: bytes
    # Facets ingest recorded as unusable (JSON Pointers); derivation reads around them.
    skipped_facets: frozenset[str] = frozenset()

    @cached_property  # read for every fact the event yields
    def version(self) -> Version:
        return iso(self.event_time), self.digest.hex()


@dataclass
class JobFact:
    key: JobKey
    own: bool
    times: list[datetime] = field(default_factory=list)
    # facet key → (version, value); the latest version wins.
    facets: dict[str, tuple[Version, Any]] = field(default_factory=dict)
    parent: tuple[Version, JobKey] | None = None


@dataclass
class RunFact:
    run_uuid: uuid.UUID
    run_id_text: str
    # (own 0/1, version) → job key; the greatest wins (own events beat parent facets).
    job: tuple[tuple[int, Version], JobKey]
    own: bool
    state: tuple[int, str, int, str] | None = None  # (terminal, time, rank, digest)
    state_type: str = ""
    state_time: datetime | None = None
    first_event: datetime | None = None
    last_event: datetime | None = None
    first_start: datetime | None = None
    streaming: bool = False
    # One of the run's own events says each event is complete for its window (ADR 0091).
    snapshots: bool = False
    # A write event of the run (a COMPLETE, a streaming RUNNING) named an output.
    outputs_confirmed: bool = False
    facets: dict[str, tuple[Version, Any]] = field(default_factory=dict)
    parent: tuple[Version, RunKey] | None = None

    @property
    def key(self) -> RunKey:
        return self.run_uuid, self.job[1]

    @property
    def text_run_id(self) -> str | None:
        """The runId as sent when it is no UUID (its run_uuid is then per job, so the runs
        other jobs keep of it have other run_uuids; ADR 0201), else None."""
        return naming.text_run_id(self.run_id_text)


@dataclass
class AliasFact:
    key: AliasKey
    reason: tuple[tuple[int, str, str], str, int | None, int | None, str]
    # ((rank, time, digest), reason, event id, rule id, detail); the smallest wins.
    first_seen: datetime | None
    last_seen: datetime | None


@dataclass
class StaticFact:
    version: str  # "<eventTime ISO>|<digest hex>"
    event_id: int
    declared_at: datetime
    # (alias, direction) → via ("" declared, "column_lineage" only named there)
    datasets: dict[tuple[AliasKey, str], str] = field(default_factory=dict)
    # (target alias, source alias, key hash) → column values
    columns: dict[tuple[AliasKey, AliasKey, bytes], dict[str, Any]] = field(default_factory=dict)
    # (source alias, target alias) the declaration's ``lineage`` facet states (ADR 0102)
    pairs: set[tuple[AliasKey, AliasKey]] = field(default_factory=set)


@dataclass
class ControlFact:
    """A control edge a batch's events state (jobDependencies, ADR 0090): seen first and
    last, and what the newest stating event said."""

    first_seen: datetime
    last_seen: datetime
    version: str  # "<eventTime ISO>|<digest hex>"
    run_uuid: Any
    rules: tuple[str, str, str, str]  # dependency type, sequence, status, trigger rule


@dataclass
class Facts:
    jobs: dict[JobKey, JobFact] = field(default_factory=dict)
    runs: dict[RunKey, RunFact] = field(default_factory=dict)
    aliases: dict[AliasKey, AliasFact] = field(default_factory=dict)
    # (alias, alias) → (reason, event id, rule id)
    links: dict[tuple[AliasKey, AliasKey], tuple[str, int | None, int | None]] = field(
        default_factory=dict
    )
    dataset_facets: dict[AliasKey, dict[str, tuple[Version, Any]]] = field(default_factory=dict)
    # Every distinct schema each alias was sent with, by its first sighting in the batch:
    # (alias, schema hash) → (version, event id, [[name, type], ...]) (ADR 0082).
    schemas: dict[tuple[AliasKey, bytes], tuple[Version, int, list[list[str]]]] = field(
        default_factory=dict
    )
    # (run, alias, direction) → (first, last)
    run_datasets: dict[tuple[RunKey, AliasKey, str], tuple[datetime, datetime]] = field(
        default_factory=dict
    )
    # (run, alias, direction) → how the run named it: "" (inputs/outputs), "column_lineage"
    # (only in an output's columnLineage); a key absent here is "" (ADR 0060).
    run_dataset_via: dict[tuple[RunKey, AliasKey, str], str] = field(default_factory=dict)
    # (run, source alias, target alias) → (first, last): the ``lineage`` facet's per-target
    # pairs (ADR 0102), written only with the experimental setting on.
    run_pairs: dict[tuple[RunKey, AliasKey, AliasKey], tuple[datetime, datetime]] = field(
        default_factory=dict
    )
    # (run, alias, "output") keys a write event of the run listed (catalog.models.writes).
    confirmed_outputs: set[tuple[RunKey, AliasKey, str]] = field(default_factory=set)
    # (job, alias, direction) → (first, last, declared)
    job_datasets: dict[tuple[JobKey, AliasKey, str], tuple[datetime, datetime, bool]] = field(
        default_factory=dict
    )
    # (run, target alias, source alias, key hash) → row values
    column_facts: dict[tuple[RunKey, AliasKey, AliasKey, bytes], dict[str, Any]] = field(
        default_factory=dict
    )
    event_datasets: set[tuple[AliasKey, int, str]] = field(default_factory=set)
    # Aliases named as a symlinks identifier of type TABLE (preferred as display names).
    table_names: set[AliasKey] = field(default_factory=set)
    metadata: list[dict[str, Any]] = field(default_factory=list)
    # Control flow: (upstream job, downstream job) → what the batch says of it (control_edges.py).
    control: dict[tuple[JobKey, JobKey], ControlFact] = field(default_factory=dict)
    # Static lineage: per job, the newest JobEvent declaration of the batch (declarations.py).
    static: dict[JobKey, StaticFact] = field(default_factory=dict)
    # Run facts: (run, alias, direction, facet name) → (version text, value) (io_facets.py)
    run_dataset_facets: dict[tuple[RunKey, AliasKey, str, str], tuple[str, Any]] = field(
        default_factory=dict
    )


def earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def version_text(event: RawEvent) -> str:
    """A version as the database keeps it: ``"<eventTime ISO>|<digest hex>"``."""
    time, digest = event.version
    return f"{time}|{digest}"


class Extractor(Protocol):
    """What a facet reader may ask of the extractor (``facts.Extractor`` is the one)."""

    facts: Facts

    def alias(
        self,
        namespace: Any,
        name: Any,
        event: RawEvent,
        reason: str,
        detail: str = "",
        rule_id: int | None = None,
    ) -> AliasKey: ...

    def try_alias(
        self, namespace: Any, name: Any, event: RawEvent, detail: str
    ) -> AliasKey | None: ...

    def job(self, namespace: Any, name: Any, own: bool) -> "JobFact": ...

    @staticmethod
    def span(into: dict, key: Any, time: datetime) -> None: ...

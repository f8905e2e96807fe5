"""OpenLineage event validation: what the 2-0-2 schema requires, told apart by structure.

The line (ADR 0004): an event is refused only when its *core* cannot be used: its kind,
``eventTime``, the run's ``runId``, the job's namespace and name, each dataset's namespace
and name. Everything else that breaks the spec (standard facets against their schemas, a
facets container that is not an object, ``producer``, ``schemaURL``, an ``eventType``
outside the enum) is a *warning*: the event is stored as received and the problems are
recorded with it. Lenient as before where real producers are: a missing ``schemaURL``,
runIds that are not UUIDs, eventTime without a zone or with nanoseconds. Unknown facets and
fields are kept verbatim. Every problem is reported with its JSON Pointer, all at once.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.problems import FieldError, invalid_event
from core.timestamps import parse_timestamp
from ingest.facets import FacetProblem, facet_problems
from ingest.models import EventKind

EVENT_TYPES = {"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"}


@dataclass(frozen=True)
class EventRecord:
    """A validated event ready to be stored: the payload plus the columns indexed from it."""

    kind: str
    payload: Any
    event_time: datetime | None
    event_type: str | None = None
    run_id: str | None = None
    job_namespace: str | None = None
    job_name: str | None = None
    producer: str | None = None
    schema_url: str | None = None
    # What is wrong outside the core (paths relative to the event); stored with it.
    warnings: tuple[FacetProblem, ...] = ()


class _Checker:
    def __init__(self, base: str) -> None:
        self.base = base
        self.errors: list[FieldError] = []
        self.warnings: list[FacetProblem] = []

    def add(self, path: str, message: str) -> None:
        self.errors.append(FieldError(self.base + path, message))

    def warn(self, path: str, message: str, facet: str = "", skipped: bool = False) -> None:
        self.warnings.append(FacetProblem(path, message, facet, skipped))

    def optional_string(
        self, container: dict[str, Any], key: str, path: str, required: bool
    ) -> Any:
        """A string outside the core: a missing or mistyped value is a warning, read as None."""
        return self._typed(container, key, path, required, str, "a string", self.warn)

    def string(self, container: dict[str, Any], key: str, path: str, required: bool = True) -> Any:
        # Empty strings are schema-valid (no minLength in the spec).
        return self._typed(container, key, path, required, str, "a string", self.add)

    def obj(self, container: dict[str, Any], key: str, path: str, required: bool) -> Any:
        return self._typed(container, key, path, required, dict, "an object", self.add)

    @staticmethod
    def _typed(
        container: dict[str, Any],
        key: str,
        path: str,
        required: bool,
        kind: type,
        kind_name: str,
        report: Callable[[str, str], None],
    ) -> Any:
        """``container[key]`` when it is a ``kind``; else None, told to ``report`` (an error
        or a warning) when it is mistyped, or missing and ``required``."""
        value = container.get(key)
        if value is None:
            if required:
                report(f"{path}/{key}", "is required")
            return None
        if not isinstance(value, kind):
            report(f"{path}/{key}", f"must be {kind_name}, not {type(value).__name__}")
            return None
        return value

    def facets(self, container: dict[str, Any], key: str, path: str, position: str) -> None:
        facets = container.get(key)
        if facets is None:
            return
        if not isinstance(facets, dict):
            where = f"{path}/{key}"
            self.warn(where, f"must be an object, not {type(facets).__name__}", where, True)
            return
        self.warnings.extend(facet_problems(position, facets, f"{path}/{key}"))

    def datasets(self, event: dict[str, Any], key: str, position: str) -> None:
        value = event.get(key)
        if value is None:
            return
        if not isinstance(value, list):
            self.add(f"/{key}", f"must be an array, not {type(value).__name__}")
            return
        for index, dataset in enumerate(value):
            path = f"/{key}/{index}"
            if not isinstance(dataset, dict):
                self.add(path, f"must be an object, not {type(dataset).__name__}")
                continue
            self.dataset(dataset, path)
            self.facets(dataset, f"{position}Facets", path, position)

    def dataset(self, dataset: dict[str, Any], path: str) -> None:
        self.string(dataset, "namespace", path)
        self.string(dataset, "name", path)
        self.facets(dataset, "facets", path, "dataset")


def validate_openlineage(document: Any, base: str = "") -> EventRecord:
    """Validate one OpenLineage event; raise a 400 problem naming every offending field."""
    check = _Checker(base)
    if not isinstance(document, dict):
        check.add("", f"an event must be a JSON object, not {type(document).__name__}")
        raise invalid_event(check.errors)

    event_time_text = check.string(document, "eventTime", "")
    event_time = None
    if event_time_text is not None:
        event_time = parse_timestamp(event_time_text)
        if event_time is None:
            check.add("/eventTime", f"{event_time_text[:64]!r} is not an ISO 8601 timestamp")
    producer = check.optional_string(document, "producer", "", required=True)
    schema_url = check.optional_string(document, "schemaURL", "", required=False)

    if "run" in document:
        kind = EventKind.RUN
    elif "dataset" in document:
        kind = EventKind.DATASET
    elif "job" in document:
        kind = EventKind.JOB
    else:
        check.add("", "is neither a RunEvent (run, job), a DatasetEvent (dataset) nor a JobEvent")
        raise invalid_event(check.errors)

    event_type = check.optional_string(document, "eventType", "", required=False)
    if event_type is not None and event_type not in EVENT_TYPES:
        # Derivation reads it as OTHER; the column keeps only the spec's values.
        check.warn("/eventType", f"must be one of {', '.join(sorted(EVENT_TYPES))}")
        event_type = None
    run_id = job_namespace = job_name = None
    if kind == EventKind.DATASET:
        dataset = check.obj(document, "dataset", "", required=True)
        if dataset is not None:
            check.dataset(dataset, "/dataset")
    else:
        if kind == EventKind.RUN:
            run = check.obj(document, "run", "", required=True)
            if run is not None:
                run_id = check.string(run, "runId", "/run")
                check.facets(run, "facets", "/run", "run")
        job = check.obj(document, "job", "", required=True)
        if job is not None:
            job_namespace = check.string(job, "namespace", "/job")
            job_name = check.string(job, "name", "/job")
            check.facets(job, "facets", "/job", "job")
        check.datasets(document, "inputs", "input")
        check.datasets(document, "outputs", "output")

    if check.errors:
        raise invalid_event(check.errors)
    return EventRecord(
        kind=kind,
        payload=document,
        event_time=event_time,
        event_type=event_type,
        run_id=run_id,
        job_namespace=job_namespace,
        job_name=job_name,
        producer=producer,
        schema_url=schema_url,
        warnings=tuple(check.warnings),
    )

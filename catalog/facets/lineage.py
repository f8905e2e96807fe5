"""``lineage`` (job, dataset; experimental): explicit lineage, target by target (ADR 0094).

Applied only when ``LINEAGE["EXPERIMENTAL_LINEAGE_FACET"]`` is on; off, it is kept as sent
like any unread facet. The job facet (``entries``) names target datasets and, for each,
its source datasets (``inputs``) and per target field its source fields (``fields``); the
dataset facet says the same of the output that carries it. The proposal's three rules:

- on a JobEvent it *replaces* the declaration its inputs and outputs would give;
- on a RunEvent it *accumulates*: its sources and targets are added to what the run read
  and wrote, never taking anything away;
- a target with no sources at all ("no inputs") is a source: no edge goes into it.

It is applied by rewriting the event's ``inputs``/``outputs`` (a copy; the stored event is
untouched) into what the catalog already reads: sources become inputs, a target with
sources an output whose ``columnLineage`` carries the field-level lineage, and an
entity-level source with a ``field`` a dataset-level dependency (columnLineage 1-2-0).
So static and observed lineage, column lineage, idempotency and order independence are
those of the inputs and outputs (ADR 0060, 0061). Beside that translation, ``pairs`` keeps
what it loses: which source feeds which target. A run's or a declaration's dataset edges
are its pairs when it has any, not the product of its inputs and outputs (ADR 0102).
JOB entries and JOB inputs (job-to-job flow) are not applied. A malformed entry or input
is skipped; ingest has already warned.
"""

from dataclasses import dataclass, field
from typing import Any

from catalog.facets.base import DATASET, JOB, Facet, opened
from catalog.facets.column_lineage import NAME as COLUMN_LINEAGE

NAME = "lineage"
FACET = Facet(
    NAME,
    appears=(JOB, DATASET),
    schemas=("LineageFacet",),
    extracts="only with LINEAGE_EXPERIMENTAL_LINEAGE_FACET on (else kept as sent): each "
    "DATASET target with sources becomes an output fed by them (fields as column lineage), "
    "each (source, target) a pair; on a JobEvent it replaces the declared inputs, outputs "
    "and pairs, on a RunEvent it adds to them; a target with no inputs is a source (no "
    "edge into it); JOB entries are not read",
    projects="as inputs and outputs: StaticDataset/StaticColumnLineage for JobEvents, "
    "RunDataset/JobDataset and column facts for RunEvents (ADR 0094); pairs in "
    "StaticDatasetPair/RunDatasetPair (ADR 0102)",
    native="dataset edges are the pairs (not inputs x outputs), job edges and column "
    "lineage as the event's inputs/outputs; the facet in the job's or dataset's `facets`",
    marquez="as the event's inputs/outputs; the facet in the job's or dataset's `facets`",
)

Name = tuple[str, str]
Pair = tuple[Name, Name]  # (source, target)


@dataclass
class Target:
    """What the facet says feeds one target dataset."""

    sources: dict[Name, None] = field(default_factory=dict)  # ordered set of datasets
    dependencies: list[dict[str, Any]] = field(default_factory=list)  # dataset-level
    fields: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # field → sources


def targets(facets: Any) -> dict[Name, Target]:
    """The DATASET targets of a job's facets' ``lineage`` entries, in order."""
    found: dict[Name, Target] = {}
    entries = opened(facets, NAME).get("entries")
    for entry in entries if isinstance(entries, list) else []:
        name = _dataset_name(entry)
        if name is not None:
            _read(found.setdefault(name, Target()), entry)
    return found


def dataset_target(dataset: Any) -> Target | None:
    """What an output's own ``lineage`` facet says feeds it, or None without one."""
    facet = opened(dataset.get("facets"), NAME) if isinstance(dataset, dict) else {}
    if not facet:
        return None
    target = Target()
    _read(target, facet)
    return target


def _dataset_name(value: Any) -> Name | None:
    if not isinstance(value, dict) or value.get("type") != "DATASET":
        return None
    namespace, name = value.get("namespace"), value.get("name")
    if isinstance(namespace, str) and isinstance(name, str) and namespace and name:
        return namespace, name
    return None


def _source(value: Any) -> dict[str, Any] | None:
    """A DATASET input as a columnLineage input field (``field`` only when a string)."""
    name = _dataset_name(value)
    if name is None:
        return None
    source: dict[str, Any] = {"namespace": name[0], "name": name[1]}
    if isinstance(value.get("field"), str):
        source["field"] = value["field"]
    steps = value.get("transformations")
    if isinstance(steps, list):
        source["transformations"] = [step for step in steps if isinstance(step, dict)]
    return source


def _read(target: Target, holder: dict[str, Any]) -> None:
    inputs = holder.get("inputs")
    for value in inputs if isinstance(inputs, list) else []:
        source = _source(value)
        if source is not None:
            target.sources[(source["namespace"], source["name"])] = None
            if "field" in source:  # a field affecting the whole target (the schema's words)
                target.dependencies.append(source)
    fields = holder.get("fields")
    for target_field, spec in (fields if isinstance(fields, dict) else {}).items():
        values = spec.get("inputs") if isinstance(spec, dict) else None
        for value in values if isinstance(values, list) else []:
            source = _source(value)
            if source is not None:
                target.sources[(source["namespace"], source["name"])] = None
                if "field" in source:
                    target.fields.setdefault(target_field, []).append(source)


def applied(payload: dict[str, Any], replaces: bool) -> dict[str, Any]:
    """The event as derivation reads it with the facet applied (``payload`` unchanged):
    ``replaces`` for a JobEvent (its declaration is the facet's), else added to the run's
    inputs and outputs. Without a DATASET target the event is read as sent."""
    found, outputs = _found(payload)
    if not found:
        return payload
    sent_outputs = {_dataset_name({**o, "type": "DATASET"}): o for o in outputs}
    sent_inputs = payload.get("inputs")
    inputs = [] if replaces or not isinstance(sent_inputs, list) else list(sent_inputs)
    new_outputs = [] if replaces else list(payload.get("outputs") or [])
    named = {_dataset_name({**i, "type": "DATASET"}) for i in inputs if isinstance(i, dict)}
    for name, target in found.items():
        for source in target.sources:
            if source not in named:
                named.add(source)
                inputs.append({"namespace": source[0], "name": source[1]})
        if not target.sources:
            continue  # "no inputs": a source, never fed, so not written by this job
        sent = sent_outputs.get(name)
        base = sent or {"namespace": name[0], "name": name[1]}
        if replaces:  # the facet's column lineage replaces the declared one as well
            base = {**base, "facets": _without_columns(base.get("facets"))}
        output = _with_columns(base, target)
        if sent is not None and not replaces:
            new_outputs[new_outputs.index(sent)] = output
        else:
            new_outputs.append(output)
    return {**payload, "inputs": inputs, "outputs": new_outputs}


def _found(payload: dict[str, Any]) -> tuple[dict[Name, Target], list[dict[str, Any]]]:
    """The event's DATASET targets (job facet, then its outputs' own), and its outputs."""
    job = payload.get("job")
    found = targets(job.get("facets") if isinstance(job, dict) else None)
    outputs = payload.get("outputs")
    outputs = [o for o in outputs if isinstance(o, dict)] if isinstance(outputs, list) else []
    for output in outputs:
        own, name = dataset_target(output), _dataset_name({**output, "type": "DATASET"})
        if own is not None and name is not None:
            _merge(found.setdefault(name, Target()), own)
    return found, outputs


def pairs(payload: dict[str, Any]) -> list[Pair]:
    """The (source, target) dataset pairs the facet states on the event as sent: each
    DATASET target and each of its DATASET sources, entity-level or by field (ADR 0102).
    A target with ``inputs: []`` has none (a source). Applied beside ``applied``: its
    sources are the event's inputs and its targets its outputs there."""
    found, _ = _found(payload)
    return [(source, name) for name, target in found.items() for source in target.sources]


def _merge(into: Target, other: Target) -> None:
    into.sources.update(other.sources)
    into.dependencies += other.dependencies
    for target_field, sources in other.fields.items():
        into.fields.setdefault(target_field, []).extend(sources)


def _with_columns(output: dict[str, Any], target: Target) -> dict[str, Any]:
    """The output with the target's column lineage added to its ``columnLineage``."""
    if not target.fields and not target.dependencies:
        return output
    facets = _object(output.get("facets"))
    sent = opened(facets, COLUMN_LINEAGE)
    fields = dict(_object(sent.get("fields")))
    for target_field, sources in target.fields.items():
        spec = fields.get(target_field)
        before = spec.get("inputFields") if isinstance(spec, dict) else None
        kept = before if isinstance(before, list) else []
        spec = spec if isinstance(spec, dict) else {}
        fields[target_field] = {**spec, "inputFields": [*kept, *sources]}
    dependencies = sent.get("dataset")
    dependencies = dependencies if isinstance(dependencies, list) else []
    facet = {**sent, "fields": fields, "dataset": [*dependencies, *target.dependencies]}
    return {**output, "facets": {**facets, COLUMN_LINEAGE: facet}}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _without_columns(facets: Any) -> dict[str, Any]:
    if not isinstance(facets, dict):
        return {}
    return {key: value for key, value in facets.items() if key != COLUMN_LINEAGE}

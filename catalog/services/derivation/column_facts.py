"""Events → facts, the columnLineage part: column edges' facts and the inputs they imply.

An output's ``columnLineage`` facet says which input fields make each output field
(``fields``) and which fields filter, join, group, sort or window the whole output
(``dataset``, facet 1-2-0: dataset-level dependencies). Each becomes a column fact with
every transformation the producer sent (the per-input list and the field's older form),
and every dataset it names becomes an input of the run, marked ``column_lineage`` where
the run did not list it (ADR 0060). Pure Python, like ``facts.py``.
"""

import hashlib
from collections.abc import Iterator
from typing import Any

from catalog.facets import column_lineage
from catalog.names import naming
from catalog.services.derivation.records import EPOCH, AliasKey, Extractor, RawEvent, RunFact

VIA_COLUMN_LINEAGE = "column_lineage"


# Producer text the graph and the Marquez mount show: stored redacted (ADR 0056).
text = naming.producer_text


Entry = tuple[str, dict[str, Any], dict[str, Any], "dict[str, Any] | None", bool]


def entries(dataset: dict) -> Iterator[Entry]:
    """The output's columnLineage facet, one entry per (target field, input, transformation):
    ``(target field, input, transformation, the field's older form kept beside it or None,
    dataset level)``. Its field-level lineage (``fields``) and its dataset-level
    dependencies (``dataset``, facet 1-2-0, target field ""). Observed runs and static
    declarations (catalog/services/derivation/declarations.py) read the facet here alike."""
    facet = column_lineage.of(dataset)
    if facet is None:
        return
    fields = facet.get("fields")
    for target_field, spec in (fields if isinstance(fields, dict) else {}).items():
        if not isinstance(spec, dict):
            continue
        field_form = {
            "type": spec.get("transformationType") or "",
            "subtype": "",
            "description": spec.get("transformationDescription") or "",
        }
        for source in spec.get("inputFields") or []:
            yield from _transformations(target_field, source, field_form)
    dependencies = facet.get("dataset")
    for source in dependencies if isinstance(dependencies, list) else []:
        yield from _transformations("", source, None)


def _transformations(
    target_field: str, source: Any, field_form: dict[str, Any] | None
) -> Iterator[Entry]:
    """One input field of a target field (``field_form``: the field's older form) or,
    with ``field_form`` None, one dataset-level dependency."""
    if not isinstance(source, dict) or not isinstance(source.get("field"), str):
        return
    listed = source.get("transformations")
    # Without a per-input list the field's older form is the transformation; with one,
    # the older form is kept beside each entry (both are what the producer said).
    transformations = listed if isinstance(listed, list) and listed else [field_form or {}]
    kept = field_form if field_form is not None and listed else None
    for transformation in transformations:
        if isinstance(transformation, dict):
            yield target_field, source, transformation, kept, field_form is None


def read(
    extractor: "Extractor", event: "RawEvent", run: "RunFact", target: "AliasKey", dataset: dict
) -> None:
    """The output's column lineage as column facts of the run. Every dataset it names is
    an input of the run (ADR 0060: column lineage is lineage)."""
    time = event.event_time or EPOCH
    for target_field, source, transformation, kept, dataset_level in entries(dataset):
        source_key = extractor.try_alias(
            source.get("namespace"), source.get("name"), event, column_lineage.NAME
        )
        if source_key is None:
            continue
        io_key = (run.key, source_key, "input")
        extractor.span(extractor.facts.run_datasets, io_key, time)
        extractor.facts.run_dataset_via.setdefault(io_key, VIA_COLUMN_LINEAGE)
        job_key = (run.key[1], source_key, "input")
        first, last, declared = extractor.facts.job_datasets.get(job_key, (time, time, False))
        extractor.facts.job_datasets[job_key] = (min(first, time), max(last, time), declared)
        values, digest = column_values(
            target_field, source["field"], transformation, kept, dataset_level
        )
        key = (run.key, target, source_key, digest)
        current = extractor.facts.column_facts.get(key)
        if current is None:
            extractor.facts.column_facts[key] = {**values, "first_seen": time, "last_seen": time}
        else:
            current["first_seen"] = min(current["first_seen"], time)
            current["last_seen"] = max(current["last_seen"], time)


def column_values(
    target_field: str,
    source_field: str,
    transformation: dict[str, Any],
    field_form: dict[str, Any] | None = None,
    dataset_level: bool = False,
) -> tuple[dict[str, Any], bytes]:
    """A column edge's stored values (producer text redacted) and its key hash."""
    transformation_type = text(transformation.get("type"), 32)
    transformation_subtype = text(transformation.get("subtype"), 64)
    transformation_description = text(transformation.get("description"))
    masking = bool(transformation.get("masking"))
    target_field, source_field = text(target_field), text(source_field)
    if field_form is None:  # no per-input list: the field's form is the transformation
        field_type, field_description = (
            ("", "") if dataset_level else (transformation_type, transformation_description)
        )
    else:
        field_type = text(field_form.get("type"), 32)
        field_description = text(field_form.get("description"))
    values = {
        "target_field": target_field,
        "source_field": source_field,
        "transformation_type": transformation_type,
        "transformation_subtype": transformation_subtype,
        "transformation_description": transformation_description,
        "masking": masking,
        "dataset_level": dataset_level,
        "field_transformation_type": field_type,
        "field_transformation_description": field_description,
    }
    parts = [
        target_field,
        source_field,
        transformation_type,
        transformation_subtype,
        transformation_description,
        str(masking),
    ]
    # What older versions keyed on stays the key of what they stored (a catalog derived
    # before keeps its keys); the new parts are added only where they say more.
    if dataset_level:
        parts.append("dataset")
    elif (field_type, field_description) != (transformation_type, transformation_description):
        parts += ["field", field_type, field_description]
    return values, hashlib.sha256("\0".join(parts).encode()).digest()

"""Validation of the standard OpenLineage facets against their published JSON Schemas.

Only facets the spec defines are checked (by key and position: run, job, dataset, input or
output facet); anything else is kept verbatim, as the spec requires. Formats are not
asserted, because real producers send zone-less or date-only times inside facets too.
The schemas are the spec's own files, shipped in ``ingest/schemas``.
"""

from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
# jsonschema messages can quote the whole offending value; keep problem documents readable.
_MAX_MESSAGE = 240

# The base facet each standard facet extends tells where it may appear.
_POSITION_BY_BASE = {
    "RunFacet": "run",
    "JobFacet": "job",
    "DatasetFacet": "dataset",
    "InputDatasetFacet": "input",
    "OutputDatasetFacet": "output",
}


def _base_of(definitions: dict[str, Any], name: str) -> str | None:
    for part in definitions.get(name, {}).get("allOf", []):
        reference = part.get("$ref", "")
        base = reference.rsplit("/", 1)[-1]
        if base in _POSITION_BY_BASE:
            return base
    return None


def _relax_for_older_producers(document: dict[str, Any]) -> None:
    """Accept facets as the still-common 1-0-x producers write them.

    DataQualityMetricsInputDatasetFacet now requires ``columnMetrics``; producers built on
    the 1-0-x facet (the OpenLineage proxy's own fixtures among them) send ``rowCount``
    alone. Either one is accepted; a facet with neither is still refused.
    """
    definition = document.get("$defs", {}).get("DataQualityMetricsInputDatasetFacet")
    if definition is None:
        return
    for part in definition.get("allOf", []):
        if part.get("required") == ["columnMetrics"]:
            del part["required"]
            part["anyOf"] = [{"required": ["columnMetrics"]}, {"required": ["rowCount"]}]


@cache
def _validators() -> dict[tuple[str, str], Any]:
    core = orjson.loads((SCHEMA_DIR / "OpenLineage.json").read_bytes())
    resources = [(core["$id"], core)]
    facet_files = []
    for path in sorted((SCHEMA_DIR / "facets").glob("*.json")):
        document = orjson.loads(path.read_bytes())
        _relax_for_older_producers(document)
        resources.append((document["$id"], document))
        facet_files.append(document)
    registry = jsonschema_rs.Registry(resources)
    validators: dict[tuple[str, str], Any] = {}
    for document in facet_files:
        definitions = document.get("$defs", {})
        for key, spec in document.get("properties", {}).items():
            definition = spec.get("$ref", "").rsplit("/", 1)[-1]
            base = _base_of(definitions, definition)
            if base is None:
                continue
            validators[(_POSITION_BY_BASE[base], key)] = jsonschema_rs.validator_for(
                {"$ref": f"{document['$id']}#/$defs/{definition}"},
                registry=registry,
                validate_formats=False,
            )
    return validators


def facet_errors(position: str, facets: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """(JSON Pointer, message) for every standard facet in ``facets`` that breaks its schema."""
    validators = _validators()
    problems: list[tuple[str, str]] = []
    for key, value in facets.items():
        validator = validators.get((position, key))
        if validator is None or value is None:
            continue
        for error in validator.iter_errors(value):
            pointer = "".join(
                "/" + str(part).replace("~", "~0").replace("/", "~1")
                for part in error.instance_path
            )
            message = error.message
            if len(message) > _MAX_MESSAGE:
                message = message[: _MAX_MESSAGE - 1] + "…"
            problems.append((f"{path}/{key}{pointer}", message))
    return problems

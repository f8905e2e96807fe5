"""Validation of the standard OpenLineage facets against their published JSON Schemas.

Only facets the spec defines are checked (by key and position: run, job, dataset, input or
output facet); anything else is kept verbatim, as the spec requires. Formats are not
asserted, because real producers send zone-less or date-only times inside facets too.
The schemas are the spec's own files, shipped in ``ingest/schemas``.
"""

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson

from ingest.pointers import token

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
# jsonschema messages can quote the whole offending value; keep problem documents readable.
_MAX_MESSAGE = 240
# Facets found valid, by (position, key, content) as JSON; see _content_key. Bounded in
# entries and in bytes: emptied when either is full, so a stream of ever-new facets costs
# memory no more than this.
_KNOWN_VALID_MAX = 8192
_KNOWN_VALID_BYTES = 4 * 1024 * 1024
# Larger facets are remembered by a digest of their content instead of the content.
_KEPT_WHOLE_MAX = 2048
_known_valid: set[bytes] = set()
_known_valid_bytes = [0]  # a list: a module global that facet_problems updates in place

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
            for base, definition in _placings(definitions, spec):
                validators[(_POSITION_BY_BASE[base], key)] = jsonschema_rs.validator_for(
                    {"$ref": f"{document['$id']}#/$defs/{definition}"},
                    registry=registry,
                    validate_formats=False,
                )
    return validators


def _placings(definitions: dict[str, Any], spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(base, definition) of each position a facet key may take: its definition's base, or
    each ``anyOf`` choice's (LineageFacet: dataset or job), or, for a base facet that extends
    no position itself (BaseSubsetDatasetFacet), each definition of its file that does (the
    input and the output subset)."""
    references = [spec.get("$ref", "")] + [c.get("$ref", "") for c in spec.get("anyOf", [])]
    named = [reference.rsplit("/", 1)[-1] for reference in references if reference]
    placings = [(_base_of(definitions, name), name) for name in named]
    if not any(base for base, _ in placings):
        placings = [(_base_of(definitions, name), name) for name in definitions]
    return [(base, name) for base, name in placings if base is not None]


def validated_facets() -> frozenset[tuple[str, str]]:
    """The (position, key) of every facet validated: run, job, dataset, input, output."""
    return frozenset(_validators())


@dataclass(frozen=True)
class FacetProblem:
    """What one standard facet (or a facet container) gets wrong.

    ``path`` points at the offending value, ``facet`` at the facet it belongs to (both
    relative to the event). ``skipped``: derivation does not use the facet. A facet is still
    used when it validates once null values are read as absent and its own ``_producer`` /
    ``_schemaURL`` are not required (the same leniency as a missing event ``schemaURL``).
    """

    path: str
    message: str
    facet: str
    skipped: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "message": self.message,
            "facet": self.facet,
            "skipped": self.skipped,
        }


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _usable(validator: Any, value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    cleaned = _without_nulls(value)
    cleaned.setdefault("_producer", "")
    cleaned.setdefault("_schemaURL", "")
    return bool(validator.is_valid(cleaned))


def _message(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"


def facet_problems(position: str, facets: dict[str, Any], path: str) -> list[FacetProblem]:
    """Every schema violation of the standard facets in ``facets`` (``path``: the container)."""
    validators = _validators()
    problems: list[FacetProblem] = []
    for key, value in facets.items():
        validator = validators.get((position, key))
        if validator is None or value is None:
            continue
        content = _content_key(position, key, value)
        if content is not None and content in _known_valid:
            continue
        errors = list(validator.iter_errors(value))
        if not errors:
            if content is not None:
                _remember(content)
            continue
        facet_path = f"{path}/{token(key)}"
        skipped = not _usable(validator, value)
        for error in errors:
            pointer = "".join("/" + token(str(part)) for part in error.instance_path)
            problems.append(
                FacetProblem(facet_path + pointer, _message(error.message), facet_path, skipped)
            )
    return problems


def _remember(content: bytes) -> None:
    if len(_known_valid) >= _KNOWN_VALID_MAX or _known_valid_bytes[0] >= _KNOWN_VALID_BYTES:
        _known_valid.clear()
        _known_valid_bytes[0] = 0
    _known_valid.add(content)
    _known_valid_bytes[0] += len(content)


def _content_key(position: str, key: str, value: Any) -> bytes | None:
    """A facet's place and content, to skip checking it again (None: uncached).

    Why: a facet's verdict depends on its content alone, producers send the same facets
    over and over (a dataset's schema and data source in every run's START and COMPLETE,
    the engine and job type in every event), and converting a facet for the Rust validator
    was about two thirds of validation's CPU (issue 14, docs/benchmarks.md). Only valid
    facets are remembered, so every problem is still found and reported in full. orjson
    writes NaN as null, but documents reach here through ``parse_json``, which refuses NaN;
    what orjson cannot write (integers beyond 64 bits, lone surrogates) is not cached.

    The key is the JSON itself, compared whole by the set, up to ``_KEPT_WHOLE_MAX`` bytes
    (most facets are 300-400 bytes): a blake2b digest of each was 7% of a 500-event batch's
    GIL-held time in the shipped server, more than writing the JSON (ADR 0107). Larger
    facets are keyed by their digest, behind a byte no JSON text starts with.
    """
    try:
        content = orjson.dumps([position, key, value])
    except orjson.JSONEncodeError:
        return None
    if len(content) <= _KEPT_WHOLE_MAX:
        return content
    return b"\x00" + hashlib.blake2b(content, digest_size=16).digest()

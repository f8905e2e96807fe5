"""The spec's facet schemas and examples, as copied into tests/fixtures (the repository reads
nothing outside itself): spec/facets/*.json and spec/tests/<facet>/*.json of
OpenLineage/OpenLineage at the commit tests/fixtures/openlineage/SOURCES.md names."""

import json
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "openlineage"
SCHEMAS = FIXTURES / "spec" / "facets"
EXAMPLES = FIXTURES / "spec-examples" / "facets"
# The base facet a spec facet extends says where it goes in an event.
POSITION_BY_BASE = {
    "RunFacet": "run",
    "JobFacet": "job",
    "DatasetFacet": "dataset",
    "InputDatasetFacet": "input",
    "OutputDatasetFacet": "output",
}


@cache
def spec_facets() -> dict[str, tuple[str, tuple[str, ...]]]:
    """schema file stem → (the facet's key in an event, the positions it may take)."""
    found = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        document = json.loads(path.read_text())
        definitions = document.get("$defs", {})
        for key, spec in document.get("properties", {}).items():
            used = [spec, *spec.get("anyOf", [])]
            positions = _positions(definitions, [ref.get("$ref", "") for ref in used])
            # A base facet (the subsets) is extended by one per position: all of them.
            found[path.stem] = (key, positions or _positions(definitions, list(definitions)))
    return found


def _positions(definitions: dict[str, Any], references: list[str]) -> tuple[str, ...]:
    positions: list[str] = []
    for reference in references:
        for part in definitions.get(reference.rsplit("/", 1)[-1], {}).get("allOf", []):
            base = part.get("$ref", "").rsplit("/", 1)[-1]
            if base in POSITION_BY_BASE and POSITION_BY_BASE[base] not in positions:
                positions.append(POSITION_BY_BASE[base])
    return tuple(positions)


def examples() -> list[tuple[str, str, dict[str, Any]]]:
    """(schema file stem, example file name, the example's facets object)."""
    return [
        (path.parent.name, path.name, json.loads(path.read_text()))
        for path in sorted(EXAMPLES.glob("*/*.json"))
    ]

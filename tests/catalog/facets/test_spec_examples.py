"""Every example of the spec's facets (spec/tests/<facet>/*.json, copied in
tests/fixtures/openlineage/spec-examples/facets) goes through ingest and derivation where the
spec puts it and is served back as sent, redacted; and a facet of the wrong shape warns and
never refuses its event (issue 41 item 8, ADR 0084). The facets the catalog reads have their
projections checked in test_facets_end_to_end.py and test_tags_and_owners.py."""

from typing import Any

import pytest

from catalog.facets import NOT_MERGED
from catalog.services.derive import derive_events
from core.redaction import redact
from ingest.models import Event
from tests.catalog.facets.spec_examples import examples, spec_facets
from tests.catalog.facets.world import Reads, event
from tests.catalog.helpers import openlineage, store
from tests.ingest.helpers import LINEAGE, post_json

pytestmark = pytest.mark.django_db

# Where a facet at each position goes in world.event's arguments.
PLACE = {
    "job": "job",
    "run": "run",
    "dataset": "output_facets",
    "input": "input_io",
    "output": "output_io",
}


def _placed(examples: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """One event carrying each (schema, facets) where the spec puts it."""
    places: dict[str, dict[str, Any]] = {}
    for schema, facets in examples:
        places.setdefault(PLACE[_position(schema, facets)], {}).update(facets)
    return event(**places)


def _position(schema: str, facets: dict[str, Any]) -> str:
    """The facet's position; where its schema allows several, the one its _schemaURL names
    (an example of BaseSubsetDatasetFacet says #/$defs/InputSubsetDatasetFacet)."""
    _, positions = spec_facets()[schema]
    [value] = facets.values()
    url = value.get("_schemaURL", "") if isinstance(value, dict) else ""
    named = [p for p in positions if p.capitalize() in url.rsplit("#", 1)[-1]]
    return (named or list(positions))[0]


def _served(reads: Reads, position: str) -> dict[str, Any]:
    if position == "job":
        return reads.job()["facets"]
    if position == "run":
        return reads.run()["facets"]
    return reads.dataset()["facets"]


def _numbered() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The examples by file name (1.json, 2.json, ...): each group fits one event."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for schema, name, facets in examples():
        groups.setdefault(name, []).append((schema, facets))
    return groups


@pytest.mark.parametrize("name", sorted(_numbered()))
def test_the_spec_examples_are_derived_and_served_as_sent(name, api, mz):
    group = _numbered()[name]
    record = openlineage(_placed(group))
    assert record.warnings == (), [warning.as_dict() for warning in record.warnings]
    derive_events(store([record]))
    reads = Reads(api, mz)
    [stored] = Event.objects.all()
    for schema, facets in group:
        [(key, value)] = facets.items()
        position = _position(schema, facets)
        if position in ("input", "output") or key in NOT_MERGED:
            # Not a holder's facet: kept in the stored event, as sent.
            assert value in _all_facets(stored.received_payload), schema
        else:
            assert _served(reads, position)[key] == redact(value), schema


def _all_facets(payload: dict[str, Any]) -> list[Any]:
    containers = [payload["run"]["facets"], payload["job"]["facets"]]
    for dataset in payload["inputs"] + payload["outputs"]:
        containers += [dataset.get(key, {}) for key in ("facets", "inputFacets", "outputFacets")]
    return [value for container in containers for value in container.values()]


def _wrong(value: Any) -> Any:
    """The same facet with every field of the wrong type (objects become numbers, the rest
    becomes an object), its _producer and _schemaURL kept."""
    return {
        field: content if field.startswith("_") else (7 if isinstance(content, dict | list) else {})
        for field, content in value.items()
    }


def test_spec_facets_of_the_wrong_shape_warn_and_are_never_refused(ingest_client):
    """Every spec facet at once, each wrong (from its example, else not an object)."""
    samples = {stem: facets for stem, _, facets in examples()}
    wrong = []
    for schema, (key, _) in spec_facets().items():
        sample = samples.get(schema)
        wrong.append((schema, {key: _wrong(sample[key]) if sample else "not an object"}))
    response = post_json(ingest_client, LINEAGE, _placed(wrong))
    assert response.status_code == 201, response.content
    warned = {warning["facet"].rsplit("/", 1)[-1] for warning in response.json()["warnings"]}
    assert warned == {key for key, _ in spec_facets().values()}
    derive_events([response.json()["id"]])
    assert Event.objects.get().derivation_status == "derived"

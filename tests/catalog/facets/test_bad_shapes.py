"""A facet of a bad shape reads as absent: extraction and every reader of the table go
around it and never fail the event (events are stored as sent; ADR 0067)."""

import importlib
import inspect
import pkgutil
import uuid
from datetime import UTC, datetime

import pytest

import catalog.facets
from catalog.facets import FACETS, data_source, kept, schema
from catalog.names.rules import RuleSet
from catalog.services.derivation.facts import Extractor
from catalog.services.derivation.records import RawEvent
from tests.api.project_fixtures import derive
from tests.catalog.facets.world import OUTPUT, event, facet, ok, q

BAD = ["text", 3, [], None, True, {"fields": 3, "identifiers": "x", "job": [], "run": 1}]


def _modules():
    """Every module of the package that declares a facet the catalog reads."""
    unread = {facet.name for facet in kept.KEPT}
    modules = [
        importlib.import_module(f"catalog.facets.{info.name}")
        for info in pkgutil.iter_modules(catalog.facets.__path__)
    ]
    found = [m for m in modules if hasattr(m, "FACET") and m.FACET.name not in unread]
    assert {m.FACET.name for m in found} == {f.name for f in FACETS} - unread
    return found


def _run_event(bad: object) -> RawEvent:
    every = {facet.name: bad for facet in FACETS}
    dataset = {"facets": every, "inputFacets": every, "outputFacets": every}
    payload = {
        "eventType": "COMPLETE",
        "run": {"runId": str(uuid.uuid4()), "facets": every},
        "job": {"namespace": "ns", "name": "job", "facets": every},
        "inputs": [{"namespace": "s3://a", "name": "in", **dataset}],
        "outputs": [{"namespace": "s3://a", "name": "out", **dataset}],
    }
    return RawEvent(
        1, "run", "COMPLETE", datetime(2026, 3, 1, tzinfo=UTC), None, "ns", "job", payload, b"d"
    )


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_extraction_reads_around_every_badly_shaped_facet(bad):
    extractor = Extractor(RuleSet([]))
    extractor.add(_run_event(bad))
    facts = extractor.facts
    assert len(facts.runs) == 1 and not facts.column_facts and not facts.links
    if not isinstance(bad, dict):
        assert facts.run_dataset_facets == {}  # no run fact from a non-object


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_every_reader_of_the_table_takes_a_bad_shape(bad):
    called = 0
    for module in _modules():
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("_") or function.__module__ != module.__name__:
                continue
            parameters = list(inspect.signature(function).parameters)
            if parameters[:1] == ["facets"]:
                result = function({module.NAME: bad})
                list(result) if inspect.isgenerator(result) else result
                called += 1
            elif parameters[:1] == ["dataset"]:
                read = function({"facets": {module.NAME: bad}})
                assert read is None or isinstance(bad, dict)
                called += 1
    assert called >= 15  # the readers were found, not skipped


@pytest.mark.django_db
def test_a_dataset_version_with_badly_shaped_facets_is_served(mz):
    """A dataset version reads its run's own output facets from the stored event, where an
    invalid facet is kept as sent: a schema whose fields are not a list and a dataSource
    that is not an object were a 500 before the table read them (both read as absent)."""
    derive(
        event(
            output_facets={
                schema.NAME: facet("1-2-0/SchemaDatasetFacet", fields=3),
                data_source.NAME: "lake-prod",
            }
        )
    )
    path = f"/namespaces/{q(OUTPUT[0])}/datasets/{q(OUTPUT[1])}/versions"
    [version] = ok(mz.get(path))["versions"]
    assert version["fields"] == [] and version["sourceName"] == OUTPUT[0]

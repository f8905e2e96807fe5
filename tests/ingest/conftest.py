"""Fixtures of the ingest tests' own."""

import pytest

from ingest import facets as facets_module


@pytest.fixture
def empty_cache(monkeypatch):
    """The valid-facet memory (ADR 0048, keyed as ADR 0107 says), empty for one test."""
    monkeypatch.setattr(facets_module, "_known_valid", set())
    monkeypatch.setattr(facets_module, "_known_valid_bytes", [0])
    return facets_module._known_valid

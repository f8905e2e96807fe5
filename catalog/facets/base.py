"""What a facet declaration says, and the one tolerant way to open a facet.

A ``Facet`` names one facet the catalog interprets and says, in words the docs table
(docs/derivation.md) repeats: where it appears, how derivation extracts it, what it
projects onto the catalog, and how the native API and the Marquez mount show it. The
behaviour lives in the facet's own module (functions beside its ``FACET``); call sites
import that module and never spell the facet's name.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Where a facet may appear in an event (OpenLineage's positions).
RUN, JOB, DATASET, INPUT, OUTPUT = "run", "job", "dataset", "input", "output"
POSITIONS = (RUN, JOB, DATASET, INPUT, OUTPUT)


@dataclass(frozen=True)
class RunFactShape:
    """A run fact (ADR 0061): kept per (run, alias, direction) and shown by
    ``catalog/reads/run_facts.py`` under ``entry_key``, shaped by ``shape``. ``direction``: the
    direction whose own facet it is (it then beats the other direction's), or None."""

    entry_key: str
    shape: Callable[[dict[str, Any]], Any]
    direction: str | None = None


@dataclass(frozen=True)
class Facet:
    name: str  # the key in an event's facets object
    appears: tuple[str, ...]  # a subset of POSITIONS
    extracts: str  # how derivation reads it from an event
    projects: str  # what it becomes in the catalog (model.field, rows), or "facets only"
    native: str  # how /api/v1 shows it
    marquez: str  # how the Marquez mount shows it
    # The spec's facet schema files (spec/facets/<name>.json) this row covers; () for a
    # facet of our own. tests/catalog/facets/test_spec_coverage.py checks every spec file
    # has a row.
    schemas: tuple[str, ...] = ()
    # False: not merged into the holder's facets (it is kept as rows of its own).
    kept_in_facets: bool = True
    run_fact: RunFactShape | None = None

    def __post_init__(self) -> None:
        unknown = set(self.appears) - set(POSITIONS)
        if unknown or not self.appears:
            raise ValueError(f"facet {self.name}: positions {sorted(unknown)} unknown")


def opened(facets: Any, name: str) -> dict[str, Any]:
    """The facet ``name`` of a facets object, or ``{}`` when either is not an object: a
    facet of a bad shape reads as absent, never as an error (events are stored as sent)."""
    return present(facets, name) or {}


def present(facets: Any, name: str) -> dict[str, Any] | None:
    """As ``opened``, but None when the facet is absent or not an object (for projections
    that keep the previous value when the facet says nothing)."""
    value = facets.get(name) if isinstance(facets, dict) else None
    return value if isinstance(value, dict) else None

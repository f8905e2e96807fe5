"""The project's own fixtures (tests/fixtures/openlineage/project, origins in SOURCES.md):
load, ingest and derive them through the real paths."""

from pathlib import Path
from typing import Any

import orjson

from catalog.services.derive import derive_events
from tests.catalog.helpers import openlineage, store

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage" / "project"


def fixture(name: str) -> dict[str, Any]:
    return orjson.loads((PROJECT / f"{name}.json").read_bytes())


def derive(*events: dict[str, Any]) -> None:
    """Ingest and derive each event in its own batch, in the order given."""
    for event in events:
        derive_events(store([openlineage(event)]))

"""Fixtures: a collector installed with an in-memory transport or against a fake catalog."""

from collections.abc import Iterator
from typing import Any

import lineage_collector as lc
import pytest
from fake_catalog_server import Catalog
from lineage_collector.errors import counters
from lineage_collector.transport import MemoryTransport


class Captured:
    """The events a test's collector emitted, with helpers to find them."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport

    @property
    def events(self) -> list[dict[str, Any]]:
        lc.flush(5)
        return self.transport.events

    def of(self, job_name: str, event_type: str | None = None) -> list[dict[str, Any]]:
        return [
            event
            for event in self.events
            if event["job"]["name"] == job_name
            and (event_type is None or event["eventType"] == event_type)
        ]

    def complete(self, job_name: str) -> dict[str, Any]:
        (event,) = self.of(job_name, "COMPLETE")
        return event

    def io(self, job_name: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """(inputs, outputs) of the job's COMPLETE event as (namespace, name) pairs."""
        event = self.complete(job_name)
        return (
            {(item["namespace"], item["name"]) for item in event["inputs"]},
            {(item["namespace"], item["name"]) for item in event["outputs"]},
        )


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OPENLINEAGE_URL",
        "OPENLINEAGE_API_KEY",
        "OPENLINEAGE_NAMESPACE",
        "OPENLINEAGE_DISABLED",
        "LINEAGE_SILENT_FAIL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def captured() -> Iterator[Captured]:
    transport = MemoryTransport()
    counters.reset()
    lc.install(transport=transport, namespace="tests", flush_interval=0.01)
    yield Captured(transport)
    lc.uninstall()


@pytest.fixture
def catalog():
    server = Catalog()
    yield server
    server.server.shutdown()
    server.server.server_close()


@pytest.fixture
def installed():
    counters.reset()

    def install(**overrides):
        overrides.setdefault("flush_interval", 0.01)
        return lc.install(namespace="tests", **overrides)

    yield install
    lc.uninstall()


@pytest.fixture
def keep_alive_catalog():
    server = Catalog(keep_alive=True)
    yield server
    server.server.shutdown()
    server.server.server_close()

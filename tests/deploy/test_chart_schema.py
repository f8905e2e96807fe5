"""docs/deploy.md: every value is type-checked by values.schema.json, so a typo in a chart
key fails the install instead of being ignored. Tried at every level of the schema: a
misspelt key beside the real ones is refused by Helm, from the schema itself, so a key
added later is tried too. Only the maps handed to Kubernetes (or to the environment) as
they are stay open, and they are listed here."""

import json
from collections.abc import Iterator
from typing import Any

import helm_python
import pytest

from tests.deploy.rendering import CHART, render_values

SCHEMA = json.loads((CHART / "values.schema.json").read_text())
# Maps the chart passes through as given: Kubernetes (or the process) checks what is in them.
PASS_THROUGH = {
    "global",
    "django.extraEnv",
    "kafka.config",
    "podSecurityContext",
    "securityContext",
    "service.annotations",
    "ingress.annotations",
    "metrics.serviceMonitor.labels",
    "serviceAccount.annotations",
    *(
        f"{part}.{name}"
        for part in ("web", "worker", "webhooks", "beat", "kafka")
        for name in (
            "resources.requests",
            "resources.limits",
            "podAnnotations",
            "podLabels",
            "nodeSelector",
            "affinity",
        )
    ),
    "migrations.resources.requests",
    "migrations.resources.limits",
    # Label maps of the NetworkPolicy peers: their keys and values are checked by pattern.
    *(
        f"networkPolicy.{part}.from[].{selector}.matchLabels"
        for part in ("web", "metrics")
        for selector in ("podSelector", "namespaceSelector")
    ),
}


def _resolved(node: dict[str, Any]) -> dict[str, Any]:
    """A node, or the definition its ``$ref`` names (``#/definitions/<name>``)."""
    while "$ref" in node:
        node = SCHEMA["definitions"][node["$ref"].removeprefix("#/definitions/")]
    return node


def _objects(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of the schema with its dotted path ("[]" for an array's items), a
    definition's at every place that refers to it."""
    node = _resolved(node)
    if node.get("type") == "object" or "properties" in node:
        yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _objects(child, f"{path}.{name}".lstrip("."))
    if isinstance(node.get("items"), dict):
        yield from _objects(node["items"], f"{path}[]")


def _misspelt(path: str) -> dict[str, Any]:
    """Values that add a misspelt key to the object at ``path``."""
    value: Any = {"misspeltKey": 1}
    for part in reversed(path.split(".")):
        value = {part[:-2]: [value]} if part.endswith("[]") else {part: value}
    return value


CLOSED = sorted(path for path, node in _objects(SCHEMA) if path not in PASS_THROUGH)


def test_only_the_pass_through_maps_are_open() -> None:
    open_ = {
        path for path, node in _objects(SCHEMA) if node.get("additionalProperties") is not False
    }
    assert open_ == PASS_THROUGH


@pytest.mark.parametrize("path", CLOSED)
def test_a_misspelt_key_fails_the_install(path: str) -> None:
    with pytest.raises(helm_python.HelmError, match="misspeltKey"):
        render_values(_misspelt(path) if path else {"misspeltKey": 1})


def test_an_upgrade_that_still_sets_web_gunicorn_stops_before_anything_changes() -> None:
    """docs/deploy.md: `web.gunicorn` (before ADR 0052) is refused, not silently ignored."""
    with pytest.raises(helm_python.HelmError, match="gunicorn"):
        render_values({"web": {"gunicorn": {"workers": 2, "threads": 8}}}, upgrade=True)

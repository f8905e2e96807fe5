"""Render the Helm chart with Helm's own engine (helm-python-sdk binds Helm's Go library)."""

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import helm_python
import yaml

from tests import fast_yaml

ROOT = Path(__file__).resolve().parent.parent.parent
CHART = ROOT / "charts" / "lineage-catalog"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
RELEASE = "lc"
NAMESPACE = "lineage"
# The Kubernetes versions the manifests are validated against: the oldest the chart
# supports (Chart.yaml kubeVersion) and the newest schemas kubernetes-validate ships.
KUBE_VERSIONS = ("1.27.0", "1.35.0")

# Every values variant by name: the chart's defaults and each ci/*-values.yaml.
VARIANTS: dict[str, dict[str, Any]] = {"default": {}} | {
    path.name.removesuffix("-values.yaml"): yaml.safe_load(path.read_text()) for path in CI_VALUES
}


@dataclass(frozen=True)
class Rendered:
    notes: str
    manifests: tuple[dict[str, Any], ...]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [manifest for manifest in self.manifests if manifest["kind"] == kind]

    def named(self, kind: str, suffix: str) -> dict[str, Any]:
        matches = [m for m in self.of_kind(kind) if m["metadata"]["name"].endswith(suffix)]
        assert len(matches) == 1, f"expected one {kind} named *{suffix}, got {len(matches)}"
        return matches[0]


def render_values(values: dict[str, Any], *, upgrade: bool = False) -> Rendered:
    with helm_python.Chart.load(CHART) as chart:
        files = chart.render(
            values,
            name=RELEASE,
            namespace=NAMESPACE,
            is_install=not upgrade,
            is_upgrade=upgrade,
            revision=2 if upgrade else 1,
        )
    notes = ""
    manifests: list[dict[str, Any]] = []
    for path, text in sorted(files.items()):
        if path.endswith("NOTES.txt"):
            notes = text
            continue
        manifests.extend(doc for doc in fast_yaml.load_all(text) if doc)
    return Rendered(notes, tuple(manifests))


@cache
def render(variant: str) -> Rendered:
    return render_values(VARIANTS[variant])


def pod_specs(rendered: Rendered) -> dict[str, dict[str, Any]]:
    """Every pod template, by '<Kind>/<name>'."""
    specs = {}
    for manifest in rendered.manifests:
        if manifest["kind"] in {"Deployment", "Job"}:
            key = f"{manifest['kind']}/{manifest['metadata']['name']}"
            specs[key] = manifest["spec"]["template"]["spec"]
    return specs


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]

"""docs/deploy.md names the objects of a release called ``lineage`` in namespace ``lineage``
(its install command): the Job whose logs to read when an upgrade fails, the Deployment to
``kubectl exec`` into, the label a rollout restart selects and the pod IP the settings
accept as Host. Each must be what the chart renders under that name, or the command the
text gives fails when it is needed."""

import re
from pathlib import Path
from typing import Any

import helm_python
import yaml

from tests.deploy.rendering import CHART

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy.md"


def _rendered(values: dict[str, Any]) -> list[dict[str, Any]]:
    with helm_python.Chart.load(CHART) as chart:
        files = chart.render(values, name="lineage", namespace="lineage", is_install=True)
    return [
        doc
        for path, text in files.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def test_every_object_deploy_md_names_is_rendered_for_its_release() -> None:
    text = DEPLOY.read_text()
    named = set(re.findall(r"\b(deployment|job)/([a-z0-9-]+)", text))
    assert ("job", "lineage-lineage-catalog-migrate") in named  # the pattern finds them
    rendered = {(m["kind"].lower(), m["metadata"]["name"]) for m in _rendered({})}
    assert named <= rendered, named - rendered


def test_the_rollout_restart_selects_every_deployment_of_the_release() -> None:
    """ "Rotating DJANGO_SECRET_KEY ... restart (kubectl rollout restart deployment -l
    app.kubernetes.io/instance=lineage)": every pod that reads the key restarts."""
    (selector,) = re.findall(r"rollout restart deployment -l (\S+?)`", DEPLOY.read_text())
    key, value = selector.split("=")
    values = {"kafka": {"enabled": True, "bootstrapServers": "k:9092", "topics": ["ol"]}}
    deployments = [m for m in _rendered(values) if m["kind"] == "Deployment"]
    assert {
        m["metadata"]["name"].removeprefix("lineage-lineage-catalog-") for m in deployments
    } == {
        "web",
        "worker",
        "beat",
        "webhooks",
        "kafka-consumer",
    }
    for deployment in deployments:
        assert deployment["metadata"]["labels"][key] == value, deployment["metadata"]["name"]


def test_the_web_pods_are_told_their_own_ip_for_the_host_check() -> None:
    """ "the settings accept the pod's own IP as Host (POD_IP), which is what a scraper
    sends": the web container gets it from the pod's status."""
    (web,) = [
        m
        for m in _rendered({})
        if m["kind"] == "Deployment" and m["metadata"]["name"].endswith("-web")
    ]
    (container,) = web["spec"]["template"]["spec"]["containers"]
    (pod_ip,) = [variable for variable in container["env"] if variable["name"] == "POD_IP"]
    assert pod_ip["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}

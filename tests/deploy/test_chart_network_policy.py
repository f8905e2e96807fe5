"""The chart's NetworkPolicies (ADR 0188): with ``networkPolicy.enabled`` every pod of the
release takes connections only from its own node (the kubelet's probes) and from the peers
the values name, each on the one port the pod listens on for them; the Kafka consumer's
probe port (ADR 0177) from nothing in the cluster unless asked.

The rendered policies are read as Kubernetes reads them (``admits`` below: a pod no policy
selects takes everything; a selected one what some rule's ports and peers match), and the
ports are the ones the rendered pods listen on, so a policy on the Service's port (80) or
a selector that misses its pods fails here."""

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from tests.deploy.rendering import (
    KUBE_VERSIONS,
    NAMESPACE,
    ROOT,
    VARIANTS,
    Rendered,
    containers,
    render,
    render_values,
)

ALL = sorted(VARIANTS)
NETWORK = VARIANTS["network-policy"]


# --- Kubernetes' reading of a NetworkPolicy ---------------------------------------------------


@dataclass(frozen=True, eq=False)  # told apart by identity: the tests name each once
class Peer:
    """Where a connection comes from: a pod (its namespace and labels), an address outside
    the cluster, or the target pod's own node."""

    name: str
    namespace: str = ""
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    ip: str = ""
    node: bool = False


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A LabelSelector's answer for ``labels`` (an empty selector selects everything)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _peer_matches(entry: Mapping[str, Any], peer: Peer) -> bool:
    if "ipBlock" in entry:
        if not peer.ip:
            return False
        address = ipaddress.ip_address(peer.ip)
        block = entry["ipBlock"]
        return address in ipaddress.ip_network(block["cidr"]) and not any(
            address in ipaddress.ip_network(cut) for cut in block.get("except", [])
        )
    if not peer.namespace:  # an address outside the cluster is no pod
        return False
    if "namespaceSelector" in entry:
        in_namespace = _selects(entry["namespaceSelector"], peer.namespace_labels)
    else:  # a podSelector alone: the policy's own namespace
        in_namespace = peer.namespace == NAMESPACE
    return in_namespace and _selects(entry.get("podSelector") or {}, peer.labels)


def _port_matches(
    ports: list[Mapping[str, Any]] | None, port: int, named: Mapping[str, int]
) -> bool:
    if not ports:
        return True
    for rule in ports:
        if rule.get("protocol", "TCP") != "TCP":
            continue
        number = rule.get("port")
        if number is None:
            return True
        number = named.get(number) if isinstance(number, str) else number
        if number is not None and number <= port <= rule.get("endPort", number):
            return True
    return False


def admits(
    policies: list[dict[str, Any]],
    pod: Mapping[str, str],
    named: Mapping[str, int],
    port: int,
    peer: Peer,
) -> bool:
    """Whether Kubernetes lets ``peer`` connect to ``port`` of a pod with labels ``pod``
    (``named``: the pod's named container ports) in the release's namespace."""
    if peer.node:
        return True  # "traffic to and from the node where a Pod is running is always allowed"
    selecting = [
        policy
        for policy in policies
        if "Ingress" in policy["spec"].get("policyTypes", ["Ingress"])
        and _selects(policy["spec"]["podSelector"], pod)
    ]
    if not selecting:
        return True  # a pod no policy selects is not isolated
    return any(
        _port_matches(rule.get("ports"), port, named)
        and (not rule.get("from") or any(_peer_matches(entry, peer) for entry in rule["from"]))
        for policy in selecting
        for rule in policy["spec"].get("ingress") or []
    )


# --- Who connects, in the network-policy variant ----------------------------------------------

KUBELET = Peer("kubelet", node=True)
INGRESS = Peer(
    "ingress controller",
    "ingress-nginx",
    {"kubernetes.io/metadata.name": "ingress-nginx"},
    {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"},
)
# The same labels in another namespace: the namespaceSelector is what admits the controller.
FAKE_INGRESS = Peer(
    "ingress look-alike", "default", {"kubernetes.io/metadata.name": "default"}, INGRESS.labels
)
PRODUCER = Peer(
    "producer",
    "airflow",
    {"kubernetes.io/metadata.name": "airflow", "lineage.example.com/producers": ""},
    {"app": "airflow-worker"},
)
PROMETHEUS = Peer(
    "prometheus",
    "monitoring",
    {"kubernetes.io/metadata.name": "monitoring"},
    {"app.kubernetes.io/name": "prometheus"},
)
GRAFANA = Peer(
    "grafana", "monitoring", PROMETHEUS.namespace_labels, {"app.kubernetes.io/name": "grafana"}
)
NEIGHBOUR = Peer(
    "a pod beside the release",
    NAMESPACE,
    {"kubernetes.io/metadata.name": NAMESPACE},
    {"app": "other"},
)
OUTSIDE = Peer("an address outside the cluster", ip="203.0.113.7")
PEERS = [KUBELET, INGRESS, FAKE_INGRESS, PRODUCER, PROMETHEUS, GRAFANA, NEIGHBOUR, OUTSIDE]


def _release_peer(rendered: Rendered, component: str) -> Peer:
    """A pod of the release itself (a worker, say), as the source of a connection."""
    labels = _pods(rendered)[component][0]
    return Peer(
        f"the release's {component}", NAMESPACE, {"kubernetes.io/metadata.name": NAMESPACE}, labels
    )


def _pods(rendered: Rendered) -> dict[str, tuple[dict[str, str], dict[str, int]]]:
    """Every pod template of the release by component: its labels and named ports."""
    pods = {}
    for manifest in rendered.manifests:
        if manifest["kind"] in {"Deployment", "Job"}:
            template = manifest["spec"]["template"]
            labels = template["metadata"]["labels"]
            ports = {
                port["name"]: port["containerPort"]
                for container in containers(template["spec"])
                for port in container.get("ports", [])
            }
            pods[labels["app.kubernetes.io/component"]] = (labels, ports)
    return pods


def _reachable(rendered: Rendered, peers: list[Peer]) -> dict[tuple[str, int], set[str]]:
    """Who reaches what: (component, port) -> the names of the peers admitted, for every
    port any pod of the release listens on."""
    policies = rendered.of_kind("NetworkPolicy")
    pods = _pods(rendered)
    ports = {number for _labels, named in pods.values() for number in named.values()}
    return {
        (component, port): {
            peer.name for peer in peers if admits(policies, labels, named, port, peer)
        }
        for component, (labels, named) in pods.items()
        for port in sorted(ports)
    }


def _expected(
    rendered: Rendered, admitted: dict[tuple[str, str], set[Peer]]
) -> dict[tuple[str, int], set[str]]:
    """``admitted`` by (component, container port name), as (component, number); every
    other (component, port) admits the kubelet alone."""
    pods = _pods(rendered)
    ports = {number for _labels, named in pods.values() for number in named.values()}
    expected = {(component, port): {KUBELET.name} for component in pods for port in ports}
    for (component, port_name), peers in admitted.items():
        number = pods[component][1][port_name]  # the port the pod listens on, by its name
        expected[(component, number)] = {KUBELET.name} | {peer.name for peer in peers}
    return expected


def test_every_port_admits_only_what_must_reach_it() -> None:
    rendered = render("network-policy")
    peers = [*PEERS, _release_peer(rendered, "worker"), _release_peer(rendered, "webhooks")]
    assert _reachable(rendered, peers) == _expected(
        rendered,
        {
            ("web", "http"): {INGRESS, PRODUCER, PROMETHEUS},
            ("worker", "metrics"): {PROMETHEUS},
            # ("kafka-consumer", "probes"): the kubelet alone, the default.
        },
    )
    # The web pods' port is the container's, not the Service's (80).
    assert _pods(rendered)["web"][1]["http"] == 8000
    assert _pods(rendered)["kafka-consumer"][1]["probes"] == NETWORK["kafka"].get("port", 8001)


def test_the_consumer_port_admits_the_scraper_when_asked_and_follows_the_ports() -> None:
    values = {
        **NETWORK,
        "kafka": {**NETWORK["kafka"], "port": 8101},
        "metrics": {**NETWORK["metrics"], "workerPort": 9909},
        "networkPolicy": {
            **NETWORK["networkPolicy"],
            "metrics": {**NETWORK["networkPolicy"]["metrics"], "kafkaConsumer": True},
        },
    }
    rendered = render_values(values)
    assert _pods(rendered)["kafka-consumer"][1]["probes"] == 8101
    assert _pods(rendered)["worker"][1]["metrics"] == 9909
    assert _reachable(rendered, PEERS) == _expected(
        rendered,
        {
            ("web", "http"): {INGRESS, PRODUCER, PROMETHEUS},
            ("worker", "metrics"): {PROMETHEUS},
            ("kafka-consumer", "probes"): {PROMETHEUS},
        },
    )
    for policy in rendered.of_kind("NetworkPolicy"):
        for kube_version in KUBE_VERSIONS:
            kubernetes_validate.validate(policy, kube_version, strict=True)


def test_without_metrics_the_scraper_reaches_nothing() -> None:
    values = {**NETWORK, "metrics": {"enabled": False}}
    rendered = render_values(values)
    assert _reachable(rendered, PEERS) == _expected(
        rendered, {("web", "http"): {INGRESS, PRODUCER}}
    )


def test_the_reading_tells_an_open_port_from_a_closed_one() -> None:
    """``admits`` is not always False or True: without the policies every peer reaches
    every port, which the tests above would see."""
    rendered = render_values(
        {**NETWORK, "networkPolicy": {**NETWORK["networkPolicy"], "enabled": False}}
    )
    assert rendered.of_kind("NetworkPolicy") == []
    reachable = _reachable(rendered, PEERS)
    assert reachable[("kafka-consumer", 8001)] == {peer.name for peer in PEERS}


@pytest.mark.parametrize("variant", ALL)
def test_policies_are_rendered_only_when_enabled(variant: str) -> None:
    enabled = VARIANTS[variant].get("networkPolicy", {}).get("enabled", False)
    policies = render(variant).of_kind("NetworkPolicy")
    assert bool(policies) == enabled


# --- Values refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        # Nobody named for the web pods: only the kubelet would reach the service.
        ({"networkPolicy": {"enabled": True}}, "networkPolicy.web.from"),
        # The ServiceMonitors' Prometheus would be refused.
        (
            {
                **NETWORK,
                "networkPolicy": {**NETWORK["networkPolicy"], "metrics": {"from": []}},
            },
            "networkPolicy.metrics.from",
        ),
        (
            {
                "networkPolicy": {
                    "enabled": True,
                    "web": NETWORK["networkPolicy"]["web"],
                    "metrics": {"kafkaConsumer": True},
                }
            },
            "names nobody",
        ),
    ],
)
def test_policies_that_would_cut_off_what_the_release_needs_fail(
    values: dict[str, Any], message: str
) -> None:
    with pytest.raises(helm_python.HelmError, match=message):
        render_values(values)


def _web_peer(peer: Any) -> dict[str, Any]:
    return {"networkPolicy": {"web": {"from": [peer]}}}


@pytest.mark.parametrize(
    "values",
    [
        {"networkPolicy": {"enabled": "yes"}},
        {"networkPolicy": {"web": {"from": {"podSelector": {}}}}},  # a peer, not a list
        {"networkPolicy": {"metrics": {"kafkaConsumer": "true"}}},
        _web_peer({}),  # Kubernetes: "must specify a peer"
        _web_peer("app=ingress-nginx"),
        _web_peer({"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}),  # one or the other
        _web_peer({"ipBlock": {"cidr": "10.0.0.0"}}),
        _web_peer({"ipBlock": {"cidr": "10.0.0.0/33"}}),
        _web_peer({"ipBlock": {"cidr": "300.0.0.0/8"}}),
        _web_peer({"ipBlock": {"except": ["10.1.0.0/16"]}}),
        _web_peer({"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0"]}}),
        _web_peer({"podSelector": {"matchLabels": {"app": 1}}}),
        _web_peer({"podSelector": {"matchLabels": {"bad key": "x"}}}),
        _web_peer({"podSelector": {"matchLabels": {"app": "not a label value"}}}),
        _web_peer({"podSelector": {"app": "ingress-nginx"}}),  # matchLabels forgotten
        _web_peer(
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]
                }
            }
        ),
        _web_peer({"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
        _web_peer(
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]
                }
            }
        ),
        _web_peer(
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]
                }
            }
        ),
        _web_peer({"namespaceSelector": {"matchExpressions": [{"operator": "Exists"}]}}),
    ],
)
def test_the_schema_refuses_bad_peers(values: dict[str, Any]) -> None:
    """Refused by values.schema.json itself (the policies are not even rendered: off), each
    a peer Kubernetes would refuse or read otherwise than meant."""
    with pytest.raises(helm_python.HelmError, match="meet the specifications of the schema"):
        render_values(values)


@pytest.mark.parametrize(
    "peer",
    [
        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
        {"ipBlock": {"cidr": "fd00:10::/64"}},
        {"podSelector": {}},
        {"namespaceSelector": {}},
        {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "cockpit"}}},
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "team", "operator": "In", "values": ["data", "ml"]}]
            }
        },
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "sandbox", "operator": "DoesNotExist"}]
            }
        },
    ],
)
def test_the_schema_accepts_what_kubernetes_accepts(peer: dict[str, Any]) -> None:
    values = {**NETWORK, "networkPolicy": {**NETWORK["networkPolicy"], "web": {"from": [peer]}}}
    rendered = render_values(values)
    web = next(
        p for p in rendered.of_kind("NetworkPolicy") if p["metadata"]["name"].endswith("-web")
    )
    assert web["spec"]["ingress"][0]["from"] == [peer]
    for kube_version in KUBE_VERSIONS:
        kubernetes_validate.validate(web, kube_version, strict=True)


# --- docs/deploy.md ---------------------------------------------------------------------------


def test_the_deploy_docs_example_renders_the_policies_it_describes() -> None:
    """The values docs/deploy.md gives under "Network policies" install, and admit what the
    text says: the ingress controller and Prometheus to the web pods, Prometheus to the
    workers' metrics, nothing but the kubelet to the consumer's port."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    section = text.split("## Network policies", 1)[1].split("\n## ", 1)[0]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    values = yaml.safe_load(block)
    kafka = {"enabled": True, "bootstrapServers": "k:9092", "topics": ["ol"]}
    rendered = render_values({**values, "kafka": kafka})
    peers = [KUBELET, INGRESS, PROMETHEUS, NEIGHBOUR]
    assert _reachable(rendered, peers) == _expected(
        rendered,
        {
            ("web", "http"): {INGRESS, PROMETHEUS},
            ("worker", "metrics"): {PROMETHEUS},
        },
    )

"""docs/deploy.md "Build the image": the chart sets the web server's knobs from `web.server`
(workers, threads, maxRssMiB, accessLog) and WEB_GRACEFUL_SECONDS to the pod's grace
period minus 5, so requests in flight finish and the workers are killed before Kubernetes
kills the pod. Checked from the rendered web Deployment's environment to the options the
server (config/server.py) starts granian with."""

from typing import Any

import helm_python
import pytest

from tests.deploy.rendering import render_values
from tests.deploy.test_dockerfile import _server_options


def _web_environment(values: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """The web container's plain environment (its ConfigMap and its own values) and the
    pod's spec."""
    rendered = render_values(values)
    deployment = rendered.named("Deployment", "-web")
    spec = deployment["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        name = source["configMapRef"]["name"]
        (config_map,) = [m for m in rendered.of_kind("ConfigMap") if m["metadata"]["name"] == name]
        env.update(config_map["data"])
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return env, deployment


def test_the_chart_starts_the_web_server_as_web_server_says() -> None:
    server = {"workers": 3, "threads": 4, "maxRssMiB": 300, "accessLog": True}
    env, deployment = _web_environment(
        {"web": {"server": server, "terminationGracePeriodSeconds": 40}}
    )
    options = _server_options(**env)
    assert options["workers"] == 3 and options["blocking_threads"] == 4
    assert options["workers_max_rss"] == 300 and options["log_access"] is True
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace == 40 and options["workers_kill_timeout"] == grace - 5
    # A half-sent request head frees its place before the liveness probe gives up (ADR 0192).
    assert options["http1_settings"].header_read_timeout == 2000
    probe = deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]
    assert options["http1_settings"].header_read_timeout < probe["timeoutSeconds"] * 1000
    # Rolled with no pod missing (docs/deploy.md "Upgrade").
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_the_default_grace_leaves_the_workers_five_seconds_before_the_pod_is_killed() -> None:
    env, deployment = _web_environment({})
    grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert _server_options(**env)["workers_kill_timeout"] == grace - 5 == 25


def test_the_chart_passes_web_server_header_read_seconds() -> None:
    env, _ = _web_environment({"web": {"server": {"headerReadSeconds": 1}}})
    assert env["WEB_HEADER_READ_SECONDS"] == "1"
    assert _server_options(**env)["http1_settings"].header_read_timeout == 1000


def test_the_chart_refuses_the_thread_counts_the_server_refuses() -> None:
    """config.env.web_threads takes 2 to 1,024 (ADR 0209): the schema says the same, so a
    wrong value stops the install, not the pod's start."""
    for threads in (2, 1024):
        env, _ = _web_environment({"web": {"server": {"threads": threads}}})
        assert _server_options(**env)["blocking_threads"] == threads
    for threads in (1, 1025):
        with pytest.raises(helm_python.HelmError, match="threads"):
            render_values({"web": {"server": {"threads": threads}}})

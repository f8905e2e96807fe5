"""The bounded ports' limits are the operator's settings (ADR 0196): the Kafka consumer's
probe port and the worker's metrics port hold ``LINEAGE_BOUNDED_PORT_HANDLERS`` threads,
``_WAITING`` places in each line and give a connection ``_CONNECTION_SECONDS`` (4, 16 and
2 s unless set; they were constants, ADR 0191). A value outside its bounds stops the process
at start in one message naming it, and the chart sets them per Deployment."""

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_float, env_int
from ingest.bounded_server import BoundedWSGIServer, DeadlineHandler, Limits, serve_wsgi
from ingest.kafka.health import ProbeServer
from tests.deploy.rendering import ROOT, render_values

PARTIAL_HEAD = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"  # no blank line: still being sent


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


@pytest.fixture
def limited(settings: Any) -> Iterator[BoundedWSGIServer]:
    """A bounded server started as the worker's is, under settings of 1 handler, 1 place
    in each line and 0.5 s a connection."""
    settings.LINEAGE_BOUNDED_PORT = {"HANDLERS": 1, "WAITING": 1, "CONNECTION_SECONDS": 0.5}
    server = serve_wsgi(_app, "127.0.0.1", 0, "limits-test")
    try:
        yield server
    finally:
        server.shutdown()


def _held(port: int) -> socket.socket:
    """A connection that sent part of its request head and holds it."""
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    client.sendall(PARTIAL_HEAD)
    time.sleep(0.2)  # taken by the accepting thread (paced 10 ms) before the next
    return client


def _first_bytes(client: socket.socket, seconds: float) -> bytes:
    client.settimeout(seconds)
    try:
        return client.recv(4096)
    except TimeoutError:
        return b"(nothing yet)"


def test_the_server_holds_what_the_settings_say(limited: BoundedWSGIServer) -> None:
    """With 1 handler and 1 place, the third held connection is answered 503 at once (with
    the default 4 and 16 it would wait, as the first two do)."""
    assert limited.limits == Limits(handlers=1, waiting=1, connection_seconds=0.5)
    assert len(limited.handlers) == 1
    port = limited.server_address[1]
    first, second, third = (_held(port) for _ in range(3))
    try:
        assert _first_bytes(third, 0.4).startswith(b"HTTP/1.0 503 Service Unavailable")
        assert _first_bytes(second, 0.05) == b"(nothing yet)"  # waiting in its line
    finally:
        for client in (first, second, third):
            client.close()


def test_a_held_connection_is_closed_after_the_configured_seconds(
    limited: BoundedWSGIServer,
) -> None:
    """0.5 s to send the request head: a connection that holds its head is closed then
    (with the default 2 s it would still be open at 1.5 s)."""
    client = _held(limited.server_address[1])
    opened = time.monotonic()
    try:
        client.settimeout(5)
        while client.recv(4096):  # whatever the handler says before it closes
            pass
        closed_after = time.monotonic() - opened + 0.2  # _held's pause
    finally:
        client.close()
    assert closed_after < 1.5, closed_after


def test_the_consumers_probe_server_takes_the_settings(settings: Any) -> None:
    settings.LINEAGE_BOUNDED_PORT = {"HANDLERS": 2, "WAITING": 3, "CONNECTION_SECONDS": 7.0}

    class Handler(DeadlineHandler, BaseHTTPRequestHandler):
        pass

    server = ProbeServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert server.limits == Limits(handlers=2, waiting=3, connection_seconds=7.0)
        assert len(server.handlers) == 2
    finally:
        server.shutdown(wait=1)


@pytest.mark.parametrize(
    ("read", "value", "message"),
    [
        (env_int, "0", "LINEAGE_TEST_LIMIT='0' must be from 1 to 64."),
        (env_int, "65", "LINEAGE_TEST_LIMIT='65' must be from 1 to 64."),
        (env_int, "four", "LINEAGE_TEST_LIMIT='four' is not an integer."),
        (env_float, "-1", "LINEAGE_TEST_LIMIT='-1' must be from 1 to 64."),
        (env_float, "nan", "LINEAGE_TEST_LIMIT='nan' is not a finite number."),
        (env_float, "inf", "LINEAGE_TEST_LIMIT='inf' is not a finite number."),
    ],
)
def test_a_value_outside_its_bounds_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, read: Any, value: str, message: str
) -> None:
    monkeypatch.setenv("LINEAGE_TEST_LIMIT", value)
    with pytest.raises(ImproperlyConfigured) as refused:
        read("LINEAGE_TEST_LIMIT", 4, minimum=1, maximum=64)
    assert str(refused.value) == message
    monkeypatch.setenv("LINEAGE_TEST_LIMIT", "64")
    assert read("LINEAGE_TEST_LIMIT", 4, minimum=1, maximum=64) == 64


@pytest.mark.parametrize(
    ("command", "variable", "value", "message"),
    [
        (
            ["-m", "celery", "-A", "config", "worker", "--concurrency", "1"],
            "LINEAGE_BOUNDED_PORT_HANDLERS",
            "0",
            "LINEAGE_BOUNDED_PORT_HANDLERS='0' must be from 1 to 64.",
        ),
        (
            ["manage.py", "consume_kafka"],
            "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS",
            "2s",
            "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS='2s' is not a number.",
        ),
    ],
)
def test_a_bad_value_stops_the_worker_and_the_consumer_at_start(
    command: list[str], variable: str, value: str, message: str
) -> None:
    """Before they connect to anything: the settings refuse it, the last line says which."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test", **{variable: value})
    result = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"django.core.exceptions.ImproperlyConfigured: {message}", result.stderr[-2000:]


KAFKA = {"enabled": True, "bootstrapServers": "kafka:9092", "topics": ["lineage"]}


def _container(values: dict[str, Any], suffix: str) -> dict[str, Any]:
    deployment = render_values(values).named("Deployment", suffix)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def _limits_env(container: dict[str, Any]) -> dict[str, str]:
    return {
        item["name"]: item["value"]
        for item in container["env"]
        if item["name"].startswith("LINEAGE_BOUNDED_PORT_")
    }


def test_the_chart_sets_the_defaults_and_the_probes_wait_as_before() -> None:
    defaults = {
        "LINEAGE_BOUNDED_PORT_HANDLERS": "4",
        "LINEAGE_BOUNDED_PORT_WAITING": "16",
        "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS": "2",
    }
    worker = _container({"kafka": KAFKA}, "-worker")
    consumer = _container({"kafka": KAFKA}, "-kafka-consumer")
    assert _limits_env(worker) == _limits_env(consumer) == defaults
    assert worker["livenessProbe"]["timeoutSeconds"] == 5
    assert consumer["livenessProbe"]["timeoutSeconds"] == 3
    assert consumer["readinessProbe"]["timeoutSeconds"] == 5


def test_the_chart_sets_each_deployments_own_limits() -> None:
    """kafka.portLimits and metrics.workerPortLimits, each in its own Deployment; a probe
    waits at least connectionSeconds + 1, as long as a held connection can delay it."""
    values = {
        "kafka": {**KAFKA, "portLimits": {"handlers": 2, "waiting": 3, "connectionSeconds": 6.5}},
        "metrics": {"workerPortLimits": {"handlers": 8, "waiting": 64, "connectionSeconds": 0.5}},
    }
    consumer = _container(values, "-kafka-consumer")
    assert _limits_env(consumer) == {
        "LINEAGE_BOUNDED_PORT_HANDLERS": "2",
        "LINEAGE_BOUNDED_PORT_WAITING": "3",
        "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS": "6.5",
    }
    assert consumer["livenessProbe"]["timeoutSeconds"] == 8
    assert consumer["readinessProbe"]["timeoutSeconds"] == 8
    worker = _container(values, "-worker")
    assert _limits_env(worker) == {
        "LINEAGE_BOUNDED_PORT_HANDLERS": "8",
        "LINEAGE_BOUNDED_PORT_WAITING": "64",
        "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS": "0.5",
    }
    assert worker["livenessProbe"]["timeoutSeconds"] == 5
    slow = {"metrics": {"workerPortLimits": {"connectionSeconds": 9}}}
    assert _container(slow, "-worker")["livenessProbe"]["timeoutSeconds"] == 10


@pytest.mark.parametrize(
    "limits", [{"handlers": 0}, {"waiting": 2000}, {"connectionSeconds": 0}, {"handler": 4}]
)
def test_the_charts_schema_refuses_limits_the_settings_refuse(limits: dict[str, Any]) -> None:
    with pytest.raises(Exception, match="workerPortLimits"):
        render_values({"metrics": {"workerPortLimits": limits}})

"""The worker Deployment's liveness probe (charts/.../worker-deployment.yaml): "a dead or
wedged main process stops answering and the pod is restarted". The probe was a
``tcpSocket`` check of the metrics port, which the kernel answers for any process that
holds the listening socket: a main process that is stopped, or stuck holding the GIL,
still completed every handshake and was never restarted. Only an HTTP answer, which the
main process's metrics thread has to write, tells them apart (ADR 0171)."""

import os
import signal
import socket
import urllib.request
from pathlib import Path

import pytest

from tests.deploy.rendering import render
from tests.faults.processes import free_port, metrics_worker, port_open, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3) as answer:
            return answer.status == 200
    except OSError:
        return False


def test_the_probe_asks_for_an_answer_that_a_stopped_worker_does_not_give(
    tmp_path: Path,
) -> None:
    deployment = render("default").named("Deployment", "-worker")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    probe = container["livenessProbe"]
    assert probe["httpGet"] == {"path": "/metrics", "port": "metrics"}
    assert probe["timeoutSeconds"] < probe["periodSeconds"]

    port = free_port()
    service = metrics_worker(tmp_path, port)
    assert service.process is not None
    try:
        wait_for(lambda: _answers(port), 60, "the worker's metrics")
        os.kill(service.process.pid, signal.SIGSTOP)  # wedged: alive, doing nothing
        try:
            assert port_open(port)  # what a tcpSocket probe sees: a healthy worker
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                pass
            assert not _answers(port)  # what the httpGet probe sees
        finally:
            os.kill(service.process.pid, signal.SIGCONT)
        wait_for(lambda: _answers(port), 30, "the worker's metrics again")
    finally:
        service.stop()

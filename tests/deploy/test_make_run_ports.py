"""A busy port never takes `make run` down (issue 39): every port it opens follows PORT and
listens on HOST; a taken one gets one line naming it and the setting that moves it; a
process that cannot start never stops those that did. The consumer's probe server listens
on 127.0.0.1 unless told (issue 38 item 11; the chart tells it 0.0.0.0)."""

import contextlib
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import scripts.run_local as run_local
from ingest.models import DeadLetter
from tests.deploy.make_run import started_make_run
from tests.deploy.rendering import ROOT
from tests.faults.admin_session import AdminSession
from tests.faults.processes import current_database_url, port_open, service_env, wait_for
from tests.ingest.kafka.cluster import produce
from tests.ingest.kafka.test_consume import ol_event_dict


@contextlib.contextmanager
def held(port: int) -> Iterator[socket.socket]:
    """``port`` on 127.0.0.1 taken by another program (this test), as servers hold it."""
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen()
        yield holder


def taken(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            first = probe.getsockname()[1]
        if first + count < 65536 and not any(taken(first + step) for step in range(count)):
            return first
    raise RuntimeError("no run of free ports")


def listening(process: psutil.Process) -> set[tuple[str, int]]:
    """The addresses ``process`` and its children listen on (granian's reloader serves in a
    child of its own)."""
    return {
        (found.laddr.ip, found.laddr.port)
        for each in [process, *process.children(recursive=True)]
        for found in each.net_connections(kind="tcp")
        if found.status == psutil.CONN_LISTEN
    }


def consumer_env(**settings: str) -> dict[str, str]:
    """The consumer's settings with a broker that is never reached: the probe server starts
    before anything is read."""
    return {
        **service_env(current_database_url(), "redis://127.0.0.1:1/0"),
        "LINEAGE_KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
        "LINEAGE_KAFKA_TOPICS": "openlineage",
        **settings,
    }


def one_line(output: str, text: str) -> str:
    lines = [line for line in output.splitlines() if text in line]
    assert len(lines) == 1, output[-3000:]
    return lines[0]


# --- each process alone ----------------------------------------------------------------------


def test_a_taken_port_ends_make_run_in_one_line_before_anything_starts(tmp_path: Path) -> None:
    port = free_ports(1)
    env = {
        **service_env(current_database_url(), "redis://127.0.0.1:1/0"),
        "MAKE_RUN_DIR": str(tmp_path),
        "PORT": str(port),
    }
    with held(port):
        finished = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "run_local.py")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert finished.returncode != 0
    assert finished.stdout == ""  # nothing was started: no migration, no process
    assert finished.stderr.strip() == (
        f"[make run] port {port} on 127.0.0.1 is in use by another program: "
        f"set PORT to a free one (PORT={port + 10} make run)"
    )


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ({"PORT": "abc"}, "PORT='abc' is not a port number (1-65535): set PORT"),
        ({"PORT": "70000"}, "PORT='70000' is not a port number (1-65535): set PORT"),
        ({"PORT": "-1"}, "PORT='-1' is not a port number (1-65535): set PORT"),
        (
            {"LINEAGE_CONSUMER_PORT": "probes"},
            "LINEAGE_CONSUMER_PORT='probes' is not a port number (0-65535): set "
            "LINEAGE_CONSUMER_PORT",
        ),
        (
            {"HOST": "no-such-host.invalid"},
            "cannot listen on no-such-host.invalid (Name or service not known): set HOST to an "
            "address of this machine (127.0.0.1, or 0.0.0.0 for every one)",
        ),
        (
            {"HOST": "192.0.2.1"},  # TEST-NET-1: an address, not this machine's
            "cannot listen on 192.0.2.1 (Cannot assign requested address): set HOST to an "
            "address of this machine (127.0.0.1, or 0.0.0.0 for every one)",
        ),
    ],
)
def test_a_setting_make_run_cannot_listen_by_ends_it_in_one_line_before_anything_starts(
    tmp_path: Path, settings: dict[str, str], line: str
) -> None:
    """README "Ports": HOST, PORT and LINEAGE_CONSUMER_PORT are where make run listens. One
    it cannot use was a traceback (int() of PORT, bind() of a port over 65535), or, for a
    HOST that is not this machine's, a web server restarted five times with a traceback
    each while the others ran unreachable."""
    env = {
        **service_env(current_database_url(), "redis://127.0.0.1:1/0"),
        "MAKE_RUN_DIR": str(tmp_path),
        "PORT": str(free_ports(1)),
        **settings,
    }
    finished = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "run_local.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 1
    assert finished.stdout == ""  # nothing was started: no migration, no process
    assert finished.stderr.strip() == f"[make run] {line}"


def test_the_web_server_names_the_port_that_is_taken() -> None:
    port = free_ports(1)
    env = {
        **service_env(current_database_url(), "redis://127.0.0.1:1/0"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_WORKERS": "1",
    }
    with held(port):
        finished = subprocess.run(
            [sys.executable, "-m", "config.server"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert finished.returncode == run_local.CANNOT_START  # make run does not start it again
    assert "Traceback" not in finished.stderr and "backtrace" not in finished.stderr
    assert finished.stderr.strip().splitlines()[-1] == (
        f"config.server: port {port} on 127.0.0.1 is in use by another program: "
        "set PORT to a free port"
    )


def test_the_consumer_names_its_probe_port_when_it_is_taken() -> None:
    port = free_ports(1)
    with held(port):
        finished = subprocess.run(
            [sys.executable, "manage.py", "consume_kafka"],
            cwd=ROOT,
            env=consumer_env(LINEAGE_CONSUMER_PORT=str(port)),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert finished.returncode == run_local.CANNOT_START
    assert "Traceback" not in finished.stderr
    assert finished.stderr.strip() == (
        f"CommandError: the consumer's probe port {port} on 127.0.0.1 is in use by another "
        "program: set LINEAGE_CONSUMER_PORT to a free port (0: no probe server)"
    )


@pytest.mark.parametrize(("setting", "address"), [(None, "127.0.0.1"), ("0.0.0.0", "0.0.0.0")])
def test_the_consumer_probes_listen_on_this_machine_unless_told(
    setting: str | None, address: str
) -> None:
    """The chart sets LINEAGE_CONSUMER_HOST=0.0.0.0 (tests/deploy/test_chart.py) for the
    kubelet; anywhere else /metrics and /readyz stay on 127.0.0.1."""
    port = free_ports(1)
    settings = {"LINEAGE_CONSUMER_PORT": str(port)}
    if setting:
        settings["LINEAGE_CONSUMER_HOST"] = setting
    consumer = subprocess.Popen(
        [sys.executable, "manage.py", "consume_kafka", "--exit-when-idle", "30"],
        cwd=ROOT,
        env=consumer_env(**settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        process = psutil.Process(consumer.pid)
        wait_for(lambda: bool(listening(process)), 60, "the probe server")
        assert listening(process) == {(address, port)}
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200
    finally:
        consumer.terminate()
        consumer.wait(timeout=30)


def test_the_consumer_port_follows_port_and_a_taken_one_is_said_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    web = free_ports(3)
    assert run_local.consumer_port({}, "127.0.0.1", web) == web + 1
    assert capsys.readouterr().out == ""
    with held(web + 1):
        assert run_local.consumer_port({}, "127.0.0.1", web) == web + 2
        assert capsys.readouterr().out == (
            f"[make run] port {web + 1} on 127.0.0.1 is in use by another program: the Kafka "
            f"consumer's /healthz, /readyz and /metrics are on {web + 2} instead "
            "(LINEAGE_CONSUMER_PORT sets it)\n"
        )
        # Chosen, and taken: the consumer runs without its probes rather than not at all.
        chosen = {"LINEAGE_CONSUMER_PORT": str(web + 1)}
        assert run_local.consumer_port(chosen, "127.0.0.1", web) == 0
        assert capsys.readouterr().out == (
            f"[make run] port {web + 1} on 127.0.0.1 (LINEAGE_CONSUMER_PORT) is in use by "
            "another program: the Kafka consumer runs without its /healthz, /readyz and "
            "/metrics; set LINEAGE_CONSUMER_PORT to a free port\n"
        )
    assert run_local.consumer_port({"LINEAGE_CONSUMER_PORT": "0"}, "127.0.0.1", web) == 0


# --- the supervisor ----------------------------------------------------------------------------

_SUPERVISED = """
import subprocess, sys
import scripts.run_local as run_local
run_local.POLL_SECONDS = 0.05
python = [sys.executable, "-c"]
commands = {
    "steady": (python + ["import time; time.sleep(60)"], {}),
    "taken": (python + ["import sys; print('the port line'); sys.exit(78)"], {}),
    "crashing": (python + ["import sys; sys.exit(3)"], {}),
}
processes = {name: run_local.start(*command) for name, command in commands.items()}
run_local.supervise(processes, commands)
"""


def test_a_process_that_cannot_start_never_stops_those_that_did(tmp_path: Path) -> None:
    log = tmp_path / "supervisor.log"
    with log.open("w") as output_file:
        supervisor = subprocess.Popen(
            [sys.executable, "-c", _SUPERVISED],
            cwd=ROOT,
            stdout=output_file,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        # Its last line is said after its last exit was collected: nothing restarts it.
        wait_for(lambda: "crashing keeps" in log.read_text(), 30, "crashing to be left")
        (steady,) = psutil.Process(supervisor.pid).children()
        assert "time.sleep(60)" in " ".join(steady.cmdline())
        time.sleep(0.3)  # a few more supervision rounds: nothing else happens
        assert supervisor.poll() is None and steady.is_running()
        assert [child.pid for child in psutil.Process(supervisor.pid).children()] == [steady.pid]
    finally:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(timeout=30)
    output = log.read_text()
    assert supervisor.returncode == 0
    assert output.count("the port line") == 1  # started once: it cannot start
    assert one_line(output, "taken ") == (
        "[make run] taken cannot start as configured (its line above says why); not starting "
        "it again. Still running: steady, crashing (Ctrl-C stops them)"
    )
    assert output.count("crashing exited with 3; starting it again") == 5
    assert one_line(output, "crashing keeps") == (
        "[make run] crashing keeps exiting (last code 3); not starting it again. Still "
        "running: steady (Ctrl-C stops them)"
    )


def test_the_supervisor_ends_when_nothing_is_left_running() -> None:
    alone = _SUPERVISED.replace(
        '"steady": (python + ["import time; time.sleep(60)"], {}),', ""
    ).replace('"taken"', '"1-taken"')  # left first: "crashing" is left last
    finished = subprocess.run(
        [sys.executable, "-c", alone], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 1, finished.stdout
    last = finished.stdout.strip().splitlines()[-1]
    assert last == (
        "[make run] crashing keeps exiting (last code 3); nothing is left running, stopping"
    )


# --- make run itself, with the Kafka mock cluster --------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_make_run_with_kafka_beside_taken_ports_keeps_serving(tmp_path: Path) -> None:
    """The failure of issue 39: port 8001 taken, `LINEAGE_KAFKA_BOOTSTRAP_SERVERS=mock make
    run`. The consumer's probes move on to the next free port, in one line; later, its port
    taken while it restarts, the consumer is left stopped in one line and the web server,
    the worker and the scheduler go on. The admin replays a dead letter kept in part from
    the mock cluster the same make run started."""
    port = free_ports(3)
    with (
        held(port + 1),
        started_make_run(
            tmp_path,
            port,
            LINEAGE_KAFKA_BOOTSTRAP_SERVERS="mock",
            LINEAGE_CONSUMER_DEAD_LETTER_BYTES="256",
            LINEAGE_MAX_REQUEST_BYTES="2048",
        ) as run,
    ):
        one_line(run.output(), f"port {port + 1} on 127.0.0.1 is in use by another program")
        wait_for(lambda: {"web", "consumer"} <= set(run.children()), 60, "web and consumer")
        consumer = run.children()["consumer"]
        wait_for(lambda: bool(listening(consumer)), 60, "the consumer's probes")
        assert listening(consumer) == {("127.0.0.1", port + 2)}  # HOST, after PORT
        wait_for(lambda: bool(listening(run.children()["web"])), 60, "the web server")
        assert listening(run.children()["web"]) == {("127.0.0.1", port)}
        one_line(
            run.output(),
            f"the Kafka consumer's /healthz, /readyz and /metrics: http://127.0.0.1:{port + 2}/",
        )
        (mock,) = [
            child
            for child in psutil.Process(run.process.pid).children()
            if "ingest.kafka.mock" in " ".join(child.cmdline())
        ]
        assert {address for address, _ in listening(mock)} == {"127.0.0.1"}

        # A message refused (its eventTime is no time) and kept in part (over the 256 bytes a
        # dead letter keeps, within the 2048 the pipeline takes); the admin reads it again
        # from Kafka.
        address = re.search(r"Kafka mock cluster \(local use only\) at (\S+),", run.output())
        assert address
        timeless = {**ol_event_dict(5), "eventTime": "not a time"}
        big = {**timeless, "job": {"namespace": "big", "name": "x" * 1000}}
        produce(address.group(1), "openlineage", [big])
        wait_for(lambda: DeadLetter.objects.exists(), 60, "the dead letter")
        letter = DeadLetter.objects.get()
        assert not letter.complete
        password = run.credentials()["admin_password"]
        admin = AdminSession(f"http://127.0.0.1:{run.port}", password)
        page = admin.post(
            "/admin/ingest/deadletter/",
            {"action": "replay_selected", "_selected_action": [letter.id]},
        )
        # Read whole from the topic (not unavailable) and refused again: still no time.
        said = (
            "refused again 1 (the reason is updated), too large 0, gone from Kafka 0, "
            "no answer from Kafka 0, unavailable 0, not reached 0."
        )
        assert said in page, page[-3000:]

        # The consumer dies and, before it is started again, another program takes its port.
        consumer.kill()
        with held_when_free(port + 2):
            wait_for(lambda: "consumer cannot start" in run.output(), 60, "the consumer to give up")
            output = run.output()
            one_line(output, f"the consumer's probe port {port + 2} on 127.0.0.1 is in use")
            assert one_line(output, "consumer cannot start").endswith(
                "Still running: web, worker, scheduler (Ctrl-C stops them)"
            )
            assert "stopping" not in output
            time.sleep(1.5)  # a supervision round after it: nothing else is stopped
            assert run.process.poll() is None
            assert {"web", "worker", "scheduler"} <= set(run.children())
            assert "consumer" not in run.children()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as ok:
                assert ok.status == 200
            assert "Dead letters" in admin.get("/admin/ingest/deadletter/")  # still logged in
            assert port_open(port)


@contextlib.contextmanager
def held_when_free(port: int) -> Iterator[socket.socket]:
    """``port`` taken as soon as the process that held it has let it go."""
    deadline = time.monotonic() + 10
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        while True:
            try:
                holder.bind(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        holder.listen()
        yield holder

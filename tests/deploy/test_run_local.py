"""`make run` is a development server (DEBUG on, a fixed key): local unless told otherwise;
its supervisor starts again whatever process dies, and nothing it started outlives it."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from ingest.authentication import clear_token_cache
from ingest.models import ApiToken, Event
from ingest.services import create_token, hash_token, revoke_token
from tests.deploy.make_run import KINDS, MakeRun, started_make_run
from tests.deploy.rendering import ROOT
from tests.faults.processes import port_open, wait_for


def _run_local():
    spec = importlib.util.spec_from_file_location("run_local", ROOT / "scripts" / "run_local.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_run_binds_loopback_unless_host_says_otherwise() -> None:
    run_local = _run_local()
    assert run_local.web_command()[-2:] == ["-m", "config.server"]

    def bind(environ: dict[str, str]) -> tuple[str, str]:
        settings = run_local.web_environment(environ)
        return settings["HOST"], settings["PORT"]

    assert bind({}) == ("127.0.0.1", "8000")
    assert bind({"PORT": "8123"}) == ("127.0.0.1", "8123")
    assert bind({"HOST": "0.0.0.0", "PORT": "9000"}) == ("0.0.0.0", "9000")
    assert bind({"HOST": "::1"}) == ("::1", "8000")
    assert run_local.web_environment({})["WEB_RELOAD"] == "true"
    makefile = (ROOT / "Makefile").read_text()
    assert "HOST ?= 127.0.0.1" in makefile and "HOST=$(HOST)" in makefile


def test_development_settings_accept_only_loopback_host_names() -> None:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_ALLOWED_HOSTS"} | {
        "DJANGO_SETTINGS_MODULE": "config.settings.development"
    }
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.DEBUG, sorted(settings.ALLOWED_HOSTS))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "True ['127.0.0.1', '[::1]', 'localhost']"


# --- the supervisor (issue 27 item 11) -----------------------------------------------------
# `make run` as it runs (scripts/run_local.py: migrate, credentials, then web, worker and
# scheduler under its supervision) on the test database and a Redis of its own. Each kind of
# process is SIGKILLed and must be started again, and the system must derive afterwards.


def _pending(ids: list[int]) -> int:
    return Event.objects.filter(id__in=ids, derivation_status="pending").count()


def _wait_ready(run: MakeRun, kinds: tuple[str, ...] = tuple(KINDS)) -> dict[str, int]:
    wait_for(lambda: set(kinds) <= set(run.children()), 120, f"{kinds} to be running")
    wait_for(lambda: port_open(run.port), 120, "the web server")
    return {kind: process.pid for kind, process in run.children().items()}


def _restarted(run: MakeRun, kind: str, killed: int) -> dict[str, int]:
    """Wait for a new process of ``kind`` (the killed one may show a moment longer)."""

    def replaced() -> bool:
        current = run.children().get(kind)
        return current is not None and current.pid != killed

    wait_for(replaced, 120, f"a new {kind}")
    return _wait_ready(run)


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[MakeRun]:
    with started_make_run(tmp_path) as run:
        yield run


def _all_ended(processes: list[psutil.Process]) -> bool:
    def ended(process: psutil.Process) -> bool:
        try:
            return process.status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return True

    return all(ended(process) for process in processes)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(600)
def test_each_killed_process_is_started_again_and_derivation_goes_on(make_run: MakeRun) -> None:
    run = make_run
    first = _wait_ready(run)
    read_token = create_token("supervision test", "read")[1]

    # The worker, SIGKILLed while it derives a batch of posted events.
    ids = run.post_events(2000)  # derived in batches of 500: the kill lands after the first
    assert len(ids) == 2000
    wait_for(lambda: _pending(ids) < len(ids), 120, "derivation to start", interval=0.02)
    first_worker = run.children()["worker"]
    os.kill(first_worker.pid, signal.SIGKILL)
    assert _pending(ids) > 0, "the kill was meant to land while the worker derives"
    _restarted(run, "worker", first_worker.pid)
    assert "worker exited with -9; starting it again" in run.output()
    wait_for(lambda: _pending(ids) == 0, 180, "the new worker to derive every event")

    # The web server: its granian workers end with it, and a new one serves the port.
    web_workers = run.children()["web"].children()
    os.kill(first["web"], signal.SIGKILL)
    wait_for(lambda: _all_ended(web_workers), 60, "the killed web server's workers to end")
    _restarted(run, "web", first["web"])
    assert "web exited with -9; starting it again" in run.output()

    # The scheduler: a new one sends the periodic sweep again. The log's bytes once the
    # killed one is gone are the old one's, a sweep sent after them the new one's (here at
    # once: the schedule file it reads says the sweep is due). Two sends past a count taken
    # before the kill, as before, waited out one more 5 s period.
    killed = psutil.Process(first["scheduler"])
    os.kill(first["scheduler"], signal.SIGKILL)
    wait_for(lambda: _all_ended([killed]), 30, "the killed scheduler to end", interval=0.01)
    before = run.log.stat().st_size
    _restarted(run, "scheduler", first["scheduler"])
    assert "scheduler exited with -9; starting it again" in run.output()
    wait_for(
        lambda: b"Sending due task catalog-sweep-underived" in run.log.read_bytes()[before:],
        60,
        "the new scheduler to send the sweep",
    )

    # After all three restarts, events posted are derived, as the API says.
    later = run.post_events(50)

    def derived_through_the_api() -> bool:
        return all(
            run.request("GET", f"/api/v1/events/{event_id}", read_token)["derivation_status"]
            == "derived"
            for event_id in later
        )

    wait_for(derived_through_the_api, 120, "the later events to be derived", interval=0.5)
    assert run.process.poll() is None, run.output()[-3000:]

    # SIGKILLed, the supervisor gives nothing a chance to be stopped: all must end anyway.
    everything = run.descendants()
    assert len(everything) >= 5  # web and its 2 workers, worker and its 2 children, beat
    run.process.kill()
    wait_for(lambda: _all_ended(everything), 90, "everything make run started to end")
    wait_for(lambda: not port_open(run.port), 10, "the port to close")  # threads exit last


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)
def test_sigterm_after_a_restart_stops_everything(make_run: MakeRun) -> None:
    """What Ctrl-C does too: the supervisor stops what runs now, restarted processes too."""
    first = _wait_ready(make_run)
    os.kill(first["scheduler"], signal.SIGKILL)
    _restarted(make_run, "scheduler", first["scheduler"])
    everything = make_run.descendants()
    make_run.process.terminate()
    assert make_run.process.wait(timeout=60) == 0
    wait_for(lambda: _all_ended(everything), 60, "everything make run started to end")
    wait_for(lambda: not port_open(make_run.port), 10, "the port to close")


def _test_database_env() -> dict[str, str]:
    database = connection.settings_dict
    return dict(os.environ) | {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}"
        f"/{database['NAME']}",
    }


@pytest.mark.django_db(transaction=True)
def test_make_run_keeps_an_admin_an_ingest_token_and_a_read_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The credentials `make run` prints work, and the next run prints the same ones."""
    run_local = _run_local()
    monkeypatch.setattr(run_local, "LOCAL", tmp_path)
    monkeypatch.setattr(run_local, "CREDENTIALS", tmp_path / "credentials.json")
    env = _test_database_env()
    first = run_local.ensure_credentials(env, migrate=True)  # as `make run` calls it
    assert first["admin_login"] == "created" and first["admin_password"]
    assert {"admin_user", "admin_password", "ingest_token", "read_token"} <= set(first)
    assert json.loads((tmp_path / "credentials.json").read_text()) == first
    assert run_local.ensure_credentials(env) == first

    client = Client()
    read = {"HTTP_AUTHORIZATION": f"Bearer {first['read_token']}"}
    assert client.get("/api/v1/jobs", **read).status_code == 200
    assert client.get("/marquez/api/v1/namespaces", **read).status_code == 200
    ingest = {"HTTP_AUTHORIZATION": f"Bearer {first['ingest_token']}"}
    assert client.get("/api/v1/jobs", **ingest).status_code == 403
    assert client.login(username="admin", password=first["admin_password"])

    # A revoked token is replaced, the other kept.
    revoke_token(ApiToken.objects.get(key_hash=hash_token(first["read_token"])).id)
    clear_token_cache()
    again = run_local.ensure_credentials(env)
    assert again["read_token"] != first["read_token"]
    assert again["ingest_token"] == first["ingest_token"]
    banner = run_local.banner("http://127.0.0.1:8000", again)
    assert again["read_token"] in banner and again["ingest_token"] in banner
    assert "Start here: http://127.0.0.1:8000/" in banner


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kept", ['{"admin_user": "admin", "ingest_tok', "[]", "\udcff"])
def test_credentials_that_cannot_be_read_are_set_aside_in_one_line_and_made_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kept: str
) -> None:
    """README: the tokens are "kept in .local/credentials.json, so the next run prints the
    same ones". The file was written in place: one cut short (a run killed while writing it,
    a full disk) or edited by hand ended every later `make run` with a JSON traceback."""
    run_local = _run_local()
    credentials = tmp_path / "credentials.json"
    monkeypatch.setattr(run_local, "LOCAL", tmp_path)
    monkeypatch.setattr(run_local, "CREDENTIALS", credentials)
    credentials.write_bytes(kept.encode(errors="surrogateescape"))
    made = run_local.ensure_credentials(_test_database_env(), migrate=True)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "could not be read" in x]
    assert line.startswith(f"[make run] {credentials} could not be read (")
    assert line.endswith("set aside as credentials.json.unreadable; new tokens follow")
    assert (tmp_path / "credentials.json.unreadable").read_bytes() == kept.encode(
        errors="surrogateescape"
    )
    assert json.loads(credentials.read_text()) == made
    assert made["ingest_token"].startswith("lc_ingest_") and made["read_token"]
    assert credentials.stat().st_mode & 0o777 == 0o600
    assert run_local.ensure_credentials(_test_database_env()) == made  # kept from then on


# --- the admin login is the person's (issue 39) --------------------------------------------
# Each run used to set the admin's password again: a new hash, so every admin session ended,
# and a password changed in the admin was undone.


@pytest.mark.django_db(transaction=True)
def test_a_later_run_never_changes_the_admin_login_nor_ends_its_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_local = _run_local()
    monkeypatch.setattr(run_local, "LOCAL", tmp_path)
    monkeypatch.setattr(run_local, "CREDENTIALS", tmp_path / "credentials.json")
    env = _test_database_env()
    first = run_local.ensure_credentials(env, migrate=True)
    created = first["admin_password"]
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    browser = Client()
    assert browser.login(username="admin", password=created)
    assert browser.get("/admin/").status_code == 200

    # The next run: the same hash, the session still logged in, the password printed again.
    second = run_local.ensure_credentials(env)
    assert User.objects.get(username="admin").password == admin.password
    assert browser.get("/admin/").status_code == 200
    assert second["admin_password"] == created
    assert f"user 'admin'  password {created}" in run_local.banner("http://x", second)

    # The person changes the password (and their flags) in the admin, and logs in again.
    admin.set_password("chosen-by-the-person")
    admin.is_superuser = False
    admin.save()
    assert browser.login(username="admin", password="chosen-by-the-person")
    for _ in range(2):  # that run, and every one after it
        later = run_local.ensure_credentials(env)
        kept = User.objects.get(username="admin")
        assert kept.password == admin.password and not kept.is_superuser
        assert browser.get("/admin/").status_code == 200
        banner = run_local.banner("http://x", later)
        assert created not in banner and "chosen-by-the-person" not in banner
        assert f"created by make run on {admin.date_joined.date()}" in banner
        assert "password was changed since, so it is not shown" in banner
        assert created not in (tmp_path / "credentials.json").read_text()

    # An admin make run did not create (its credentials file gone): not touched either.
    (tmp_path / "credentials.json").unlink()
    unknown = run_local.ensure_credentials(env)
    assert User.objects.get(username="admin").password == admin.password
    assert unknown["admin_password"] == "" and unknown["admin_login"] == "existing"
    assert "not created by make run" in run_local.banner("http://x", unknown)
    assert browser.get("/admin/").status_code == 200

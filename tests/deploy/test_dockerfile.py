"""The image, checked statically (no container engine on this machine), and its web server."""

import os
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from tests.deploy.dockerfile import exec_form, parse
from tests.deploy.rendering import ROOT, containers, pod_specs, render

ARGUMENTS, STAGES = parse()
FINAL = STAGES[-1]
BUILD_TOOLS = ("gcc", "g++", "build-essential", "make ", "libpq-dev", "python3-dev", "cargo")


def test_image_is_multi_stage_on_slim_python_311() -> None:
    assert len(STAGES) >= 2
    for stage in STAGES:
        assert stage.base.startswith("python:3.11-slim"), stage.base
    assert FINAL.name == "runtime"


def test_final_stage_installs_no_build_tools_and_copies_from_the_build_stage() -> None:
    runs = " ".join(FINAL.all("RUN")).lower()
    assert "apt-get install" not in runs and "pip install" not in runs
    assert not any(tool in runs for tool in BUILD_TOOLS)
    copies = FINAL.all("COPY")
    assert copies and all(copy.startswith("--from=build ") for copy in copies)


def test_final_stage_runs_as_a_numeric_non_root_user_matching_the_chart() -> None:
    user = FINAL.last("USER")
    assert user is not None
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    for variant in ("default", "production"):
        for spec in pod_specs(render(variant)).values():
            assert spec["securityContext"]["runAsUser"] == int(uid)


def test_static_files_are_collected_at_build_time_with_production_settings() -> None:
    build = STAGES[0]
    collect = [run for run in build.all("RUN") if "collectstatic" in run]
    assert len(collect) == 1
    assert "DJANGO_SETTINGS_MODULE=config.settings.production" in collect[0]


def test_build_time_collectstatic_works_with_only_the_dockerfile_environment() -> None:
    """The RUN line's environment alone (no DATABASE_URL, no REDIS_URL) loads the settings."""
    collect = next(run for run in STAGES[0].all("RUN") if "collectstatic" in run)
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    for word in collect.split():
        name, equals, value = word.partition("=")
        if equals and name.isupper():
            env[name] = value
    result = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--no-input", "--dry-run"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_runtime_environment_selects_production_settings_and_unbuffered_output() -> None:
    env = " ".join(FINAL.all("ENV"))
    assert "DJANGO_SETTINGS_MODULE=config.settings.production" in env
    assert "PYTHONUNBUFFERED=1" in env
    assert FINAL.last("WORKDIR") == "/app"


def test_dependency_layer_installs_exactly_the_project_dependencies() -> None:
    """The Dockerfile's one-liner reads pyproject.toml; run it and compare."""
    line = next(run for run in STAGES[0].all("RUN") if "tomllib" in run)
    script = line.split('python -c "', 1)[1].split('" >', 1)[0]
    printed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert [line for line in printed if line] == expected
    assert "--only-binary=:all:" in line  # no compiler needed, none installed


def _dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_copied_sources_exist_and_are_not_ignored() -> None:
    ignored = _dockerignore()
    for copy in STAGES[0].all("COPY"):
        source = copy.split()[0]
        assert (ROOT / source).exists(), source
        assert not any(fnmatch(source, pattern) for pattern in ignored), source


def test_dockerignore_keeps_secrets_vcs_and_local_state_out_of_the_context() -> None:
    ignored = set(_dockerignore())
    assert {".git", ".venv", ".local", "tests", "staticfiles", ".env"} <= ignored


def test_default_command_is_the_web_server_in_exec_form_and_is_what_the_chart_runs() -> None:
    command = exec_form(FINAL.last("CMD") or "")
    assert FINAL.last("ENTRYPOINT") is None
    assert command == ["python", "-m", "config.server"]
    assert (ROOT / "config" / "server.py").is_file()
    for variant in ("default", "minimal", "production"):
        web = render(variant).named("Deployment", "-web")
        (container,) = web["spec"]["template"]["spec"]["containers"]
        assert container["command"] == command
        assert container.get("args") is None


def test_every_chart_command_is_something_the_image_can_run() -> None:
    """Each container runs the web server, celery or manage.py, all present in the image."""
    for variant in ("default", "production", "initial-tokens"):
        for name, spec in pod_specs(render(variant)).items():
            for container in containers(spec):
                command = container["command"]
                if command[0] == "python":
                    assert command[1:] == ["-m", "config.server"] or (
                        command[1] == "manage.py" and (ROOT / "manage.py").is_file()
                    ), name
                else:
                    assert command[0] == "celery", name
                    assert command[1] == "--app=config" and (ROOT / "config/celery.py").is_file()
                    assert command[2] in {"worker", "beat"}, name
                executable = Path(sys.executable).parent / command[0]
                assert executable.exists(), f"{command[0]} is not installed by the dependencies"


def _server_options(**env: str) -> dict[str, object]:
    from config import server

    saved = dict(os.environ)
    try:
        os.environ.update(env)
        return server.options()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_web_server_defaults_fit_two_cores() -> None:
    options = _server_options()
    assert options["workers"] == 2 and options["blocking_threads"] == 8
    assert (options["address"], options["port"]) == ("0.0.0.0", 8000)
    assert options["target"] == "config.wsgi:application"
    assert str(options["interface"]) in {"wsgi", "Interfaces.WSGI"}
    assert options["log_access"] is False and options["reload"] is False
    # Replaced when it grows or dies; stopped within the pod's grace period.
    assert options["workers_max_rss"] == 400 and options["respawn_failed_workers"] is True
    assert options["workers_kill_timeout"] == 25 and options["workers_lifetime"] is None
    assert options["rss_sample_interval"] == 30  # granian's own default


def test_web_server_reads_its_knobs_from_the_environment() -> None:
    options = _server_options(
        WEB_WORKERS="3",
        WEB_THREADS="4",
        PORT="9000",
        HOST="127.0.0.1",
        WEB_ACCESS_LOG="true",
        WEB_MAX_RSS_MIB="0",
        WEB_LIFETIME_SECONDS="10",
        WEB_GRACEFUL_SECONDS="5",
        WEB_RSS_SAMPLE_SECONDS="5",
    )
    assert options["workers"] == 3 and options["blocking_threads"] == 4
    assert (options["address"], options["port"]) == ("127.0.0.1", 9000)
    assert options["log_access"] is True and options["workers_max_rss"] is None
    assert options["workers_lifetime"] == 60  # granian's minimum
    assert options["workers_kill_timeout"] == 5 and options["rss_sample_interval"] == 5
    for outside in ("0", "301"):  # granian's own bounds (its --rss-sample-interval)
        with pytest.raises(ImproperlyConfigured, match="WEB_RSS_SAMPLE_SECONDS"):
            _server_options(WEB_RSS_SAMPLE_SECONDS=outside)


def test_a_malformed_web_setting_stops_start_up_with_its_name() -> None:
    env = {**os.environ, "WEB_WORKERS": "two", "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        [sys.executable, "-m", "config.server"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "config.server: WEB_WORKERS='two' is not an integer."
    )


def test_the_settings_secrets_leave_the_environment_once_read(monkeypatch) -> None:
    """granian copies the environment into every request's environ (ADR 0052)."""
    from django.conf import settings

    from config import server

    for name in server.SECRETS:
        monkeypatch.setenv(name, "secret-" + name)
    monkeypatch.setenv("DJANGO_SECRET_KEY_FILE", "/run/secrets/key")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "/tmp/prometheus")
    server.forget_secrets()
    assert not any(name in os.environ for name in server.SECRETS)
    assert "DJANGO_SECRET_KEY_FILE" not in os.environ
    assert os.environ["PROMETHEUS_MULTIPROC_DIR"] == "/tmp/prometheus"
    assert settings.SECRET_KEY  # what the settings read stays

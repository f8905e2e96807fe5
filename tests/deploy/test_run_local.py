"""`make run` is a development server (DEBUG on, a fixed key): local unless told otherwise."""

import importlib.util
import os
import subprocess
import sys

from tests.deploy.rendering import ROOT


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

"""`make run` is a development server (DEBUG on, a fixed key): local unless told otherwise."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from ingest.authentication import clear_token_cache
from ingest.models import ApiToken
from ingest.services import hash_token, revoke_token
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


@pytest.mark.django_db(transaction=True)
def test_make_run_keeps_an_admin_an_ingest_token_and_a_read_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The credentials `make run` prints work, and the next run prints the same ones."""
    run_local = _run_local()
    monkeypatch.setattr(run_local, "LOCAL", tmp_path)
    monkeypatch.setattr(run_local, "CREDENTIALS", tmp_path / "credentials.json")
    database = connection.settings_dict
    env = dict(os.environ) | {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}"
        f"/{database['NAME']}",
    }
    first = run_local.ensure_credentials(env, migrate=True)  # as `make run` calls it
    assert set(first) == {"admin_user", "admin_password", "ingest_token", "read_token"}
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

"""openlineage-python (the dev extra's version) configured exactly as the front page and
docs/producers.md say, against a live server: the program docs/producers.md gives to copy,
examples/openlineage_python.py, delivers with either recipe, and the catalog shows its job,
its run, its datasets and its column lineage."""

import os
import runpy
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from catalog.front.snippets import snippets
from catalog.services import derive
from ingest import parsing
from ingest.models import Event
from ingest.services import create_token

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openlineage_python.py"


def _snippet(base_url: str, token: str, producer: str) -> str:
    (snippet,) = [s for s in snippets(base_url, token) if s.producer == producer]
    return snippet.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("recipe", ["openlineage.yml", "environment"])
def test_the_example_program_delivers_with_either_recipe(
    recipe: str, live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = create_token("recipe", "ingest")[1]
    inflated: list[int] = []  # the bodies the server inflated: what arrived gzipped
    real_inflate = parsing.inflate

    def inflate(data: bytes, max_bytes: int) -> bytes:
        inflated.append(len(data))
        return real_inflate(data, max_bytes)

    monkeypatch.setattr(parsing, "inflate", inflate)
    for name in ("OPENLINEAGE_URL", "OPENLINEAGE_ENDPOINT", "OPENLINEAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    if recipe == "openlineage.yml":
        config = tmp_path / "openlineage.yml"
        config.write_text(_snippet(live_server.url, token, "openlineage-python"))
        assert yaml.safe_load(config.read_text())["transport"]["compression"] == "gzip"
        monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config))
    else:
        environment = _snippet(live_server.url, token, "openlineage-python, by environment")
        for line in environment.splitlines():
            name, value = line.removeprefix("export ").split("=", 1)
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("OPENLINEAGE_CONFIG", str(tmp_path / "none.yml"))
    run_id = runpy.run_path(str(EXAMPLE))["main"]()

    assert Event.objects.filter(run_id=run_id).count() == 2
    # docs/producers.md: the openlineage.yml recipe "also gzips each event".
    assert len(inflated) == (2 if recipe == "openlineage.yml" else 0), inflated
    derive.derive_events(list(Event.objects.values_list("id", flat=True)))
    read = {"HTTP_AUTHORIZATION": f"Bearer {create_token('recipe read', 'read')[1]}"}
    (job,) = Client().get("/api/v1/jobs", {"namespace": "examples"}, **read).json()["results"]
    assert job["name"] == "daily_orders"
    runs = Client().get("/api/v1/runs", {"job_id": job["id"]}, **read).json()["results"]
    assert [(run["run_id"], run["state"]) for run in runs] == [(run_id, "COMPLETE")]
    output = (
        Client()
        .get("/api/v1/datasets/lookup", {"namespace": "s3://lake", "name": "orders_daily"}, **read)
        .json()
    )
    assert {(edge["target_field"], edge["source_field"]) for edge in output["column_lineage"]} == {
        ("day", "ordered_at"),
        ("total", "amount"),
    }


def _run_by_hand(url: str, token: str) -> subprocess.CompletedProcess[str]:
    """The program as a reader runs it from the repository's root, configured by the
    environment (no openlineage.yml in reach)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE")}
    env.update(
        OPENLINEAGE_URL=url,
        OPENLINEAGE_ENDPOINT="api/v1/lineage",
        OPENLINEAGE_API_KEY=token,
        OPENLINEAGE_CONFIG=str(EXAMPLE.with_name("no-such-openlineage.yml")),
    )
    return subprocess.run(
        [sys.executable, str(EXAMPLE)],
        cwd=EXAMPLE.parents[1],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.django_db(transaction=True)
def test_the_example_program_says_in_one_line_which_setting_is_wrong(live_server: Any) -> None:
    """A newcomer's two first mistakes: the docs' placeholder token copied as it is, and the
    default address while make run listens on another PORT. Each ends in one line naming
    the setting to fix and exit status 1, not openlineage-python's traceback."""
    refused = _run_by_hand(live_server.url, "lc_ingest_...")
    assert refused.returncode == 1, refused
    assert "Traceback" not in refused.stderr, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "refused the token (401)" in line and "OPENLINEAGE_API_KEY" in line, line

    with socket.socket() as probe:  # a port nothing listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = create_token("recipe", "ingest")[1]
    unreachable = _run_by_hand(f"http://127.0.0.1:{port}", token)
    assert unreachable.returncode == 1, unreachable
    assert "Traceback" not in unreachable.stderr, unreachable.stderr
    (line,) = unreachable.stderr.strip().splitlines()
    assert f"nothing answered at http://127.0.0.1:{port}/api/v1/lineage" in line, line
    assert "OPENLINEAGE_URL" in line, line
    assert Event.objects.count() == 0

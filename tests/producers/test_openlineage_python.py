"""openlineage-python (the dev extra's version) configured exactly as the front page and
docs/producers.md say, against a live server: the program docs/producers.md gives to copy,
examples/openlineage_python.py, delivers with either recipe, and the catalog shows its job,
its run, its datasets and its column lineage."""

import runpy
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

"""openlineage-python (the dev extra's version) configured exactly as the front page and
docs/producers.md say, against a live server: both recipes deliver, and the catalog shows
the job, its run and its datasets."""

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from catalog.front.snippets import snippets
from catalog.services import derive
from ingest.models import Event
from ingest.services import create_token


def _snippet(base_url: str, token: str, producer: str) -> str:
    (snippet,) = [s for s in snippets(base_url, token) if s.producer.startswith(producer)]
    return snippet.text


def _emit(client: OpenLineageClient, job: str) -> str:
    run_id = str(uuid.uuid4())
    for state in (RunState.START, RunState.COMPLETE):
        client.emit(
            RunEvent(
                eventType=state,
                eventTime=datetime.now(UTC).isoformat(),
                run=Run(runId=run_id),
                job=Job(namespace="recipes", name=job),
                producer="https://example.com/producers-recipe-test",
                inputs=[InputDataset(namespace="postgres://db:5432", name="shop.public.orders")],
                outputs=[OutputDataset(namespace="s3://lake", name=f"{job}/out")],
            )
        )
    return run_id


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("recipe", ["openlineage.yml", "environment"])
def test_the_openlineage_python_recipes_deliver(
    recipe: str, live_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = create_token("recipe", "ingest")[1]
    for name in ("OPENLINEAGE_URL", "OPENLINEAGE_ENDPOINT", "OPENLINEAGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    if recipe == "openlineage.yml":
        config = tmp_path / "openlineage.yml"
        config.write_text(_snippet(live_server.url, token, "openlineage-python"))
        assert yaml.safe_load(config.read_text())["transport"]["compression"] == "gzip"
        monkeypatch.setenv("OPENLINEAGE_CONFIG", str(config))
    else:
        # The dbt-ol snippet's exports are the environment recipe of the same client.
        for line in _snippet(live_server.url, token, "dbt-ol").splitlines():
            if line.startswith("export OPENLINEAGE_") and "NAMESPACE" not in line:
                name, value = line.removeprefix("export ").split("=", 1)
                monkeypatch.setenv(name, value)
        monkeypatch.setenv("OPENLINEAGE_CONFIG", str(tmp_path / "none.yml"))
    run_id = _emit(OpenLineageClient(), f"recipe_{recipe.replace('.', '_')}")

    assert Event.objects.filter(run_id=run_id).count() == 2
    derive.derive_events(list(Event.objects.values_list("id", flat=True)))
    read = {"HTTP_AUTHORIZATION": f"Bearer {create_token('recipe read', 'read')[1]}"}
    jobs = Client().get("/api/v1/jobs", {"namespace": "recipes"}, **read).json()["results"]
    (job,) = jobs
    runs = Client().get("/api/v1/runs", {"job_id": job["id"]}, **read).json()["results"]
    assert [(run["run_id"], run["state"]) for run in runs] == [(run_id, "COMPLETE")]

"""Real corpus events in through /api/v1/lineage, derived, and read back through the read API."""

import json

import pytest

from catalog.services.derive import derive_events
from ingest.models import Event
from tests.api.conftest import results


@pytest.mark.django_db
def test_spark_column_lineage_events_read_back(corpus, ingest_client, read_client):
    files = sorted((corpus / "spark" / "cll-1.19.0").glob("*.json"))[:20]
    assert files, "corpus folder spark/cll-1.19.0 is empty"
    for path in files:
        response = ingest_client.post(
            "/api/v1/lineage", path.read_bytes(), content_type="application/json"
        )
        assert response.status_code in (200, 201), response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))

    events = results(read_client.get("/api/v1/events?limit=500"))
    assert len(events) == Event.objects.count()
    first = json.loads(files[0].read_bytes())
    assert any(e["payload"].get("eventTime") == first.get("eventTime") for e in events)

    datasets = results(read_client.get("/api/v1/datasets?limit=500"))
    assert datasets, "derivation produced no dataset"
    some = datasets[0]
    alias = some["aliases"][0]
    found = read_client.get(
        "/api/v1/datasets/lookup", {"namespace": alias["namespace"], "name": alias["name"]}
    )
    assert found.status_code == 200 and found.json()["id"] == some["id"]

    jobs = results(read_client.get("/api/v1/jobs?limit=500"))
    assert jobs
    with_outputs = [
        d
        for d in datasets
        if read_client.get(f"/api/v1/datasets/{d['id']}").json()["producing_jobs"]
    ]
    assert with_outputs, "no dataset has a producing job"
    graph = read_client.get(
        f"/api/v1/lineage/graph?node=dataset:{with_outputs[0]['id']}&columns=true"
    ).json()
    assert any(n["type"] == "job" for n in graph["nodes"])
    assert graph["edges"]
    hits = results(read_client.get("/api/v1/search", {"q": some["name"].split(".")[-1][:20]}))
    assert any(h["type"] == "dataset" for h in hits)
    export = read_client.get("/api/v1/events/export")
    assert len(b"".join(export.streaming_content).splitlines()) == Event.objects.count()

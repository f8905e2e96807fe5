"""An edge event's ``lineage_type`` and ``pipeline`` are producer text copied into
``LineageEdge``'s columns: stored redacted, so no read of them shows a secret (ADR 0172).

They were stored as sent: a ``token=`` in a lineage_type reached the graph's
``lineage_types`` and the admin's edge page, a ``password=`` in a pipeline the admin.
"""

import orjson
import pytest

from catalog.models import Dataset, LineageEdge, Run
from catalog.services.derive import derive_events
from ingest.models import Event


@pytest.mark.django_db
def test_an_edge_events_lineage_type_and_pipeline_reach_no_read_path_with_a_secret(
    ingest_client, read_client, admin_client
) -> None:
    edge = {
        "source_table": "raw.orders",
        "target_table": "gold.orders",
        "lineage_type": "direct token=S3CRET",
        "pipeline": "dagster:load_orders:run1 password=S3CRET",
    }
    response = ingest_client.post(
        "/api/v1/lineage/edges", data=orjson.dumps(edge), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))
    stored = LineageEdge.objects.get()
    assert (stored.lineage_type, stored.pipeline) == (
        "direct token=***REDACTED***",
        "dagster:load_orders:run1 password=***REDACTED***",
    )
    assert b"S3CRET" not in orjson.dumps(Run.objects.get().facets)
    for dataset_id in Dataset.objects.values_list("id", flat=True):
        for query in ("", "&columns=true"):  # the prebuilt graph and the Python assembly
            path = f"/api/v1/lineage/graph?node=dataset:{dataset_id}{query}"
            response = read_client.get(path)
            assert response.status_code == 200, (path, response.content)
            assert b"direct token=***REDACTED***" in response.content, response.content
            assert b"S3CRET" not in response.content, (path, response.content)
    page = admin_client.get(f"/admin/catalog/lineageedge/{stored.id}/change/")
    assert page.status_code == 200
    assert "S3CRET" not in page.content.decode()


@pytest.mark.django_db
def test_a_pipeline_loses_a_urls_user_info_as_the_jobs_name_does(ingest_client) -> None:
    edge = {
        "source_table": "raw.orders",
        "target_table": "gold.orders",
        "pipeline": "postgres://etl:S3CRET@db/orders",
    }
    response = ingest_client.post(
        "/api/v1/lineage/edges", data=orjson.dumps(edge), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    derive_events(list(Event.objects.values_list("id", flat=True)))
    stored = LineageEdge.objects.select_related("job").get()
    assert "S3CRET" not in stored.job.name
    assert stored.pipeline == "postgres://db/orders"

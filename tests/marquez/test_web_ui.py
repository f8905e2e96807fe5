"""The requests Marquez's web UI makes (web/src/store/requests in Marquez), built the way it
builds them (encodeURIComponent on names, nodeIds from encoded parts), replayed against the
mount and against plain /api/v1/ on a Marquez host."""

from urllib.parse import quote

import pytest
from django.test.utils import override_settings

from tests.marquez.conftest import JOB_NS, LOAD_RUN, PG, S3

pytestmark = pytest.mark.django_db


def encode(text: str) -> str:
    """JavaScript's encodeURIComponent."""
    return quote(text, safe="-_.!~*'()")


def ui_requests() -> list[tuple[str, str]]:
    ns, job, s3, daily = encode(JOB_NS), "etl.load_orders", encode(S3), encode("raw/orders/daily")
    return [
        ("/namespaces", "namespaces"),
        ("/tags", "tags"),
        ("/jobs?limit=25&offset=0", "jobs"),
        ("/jobs?limit=25&offset=0&lastRunStates=COMPLETED", "jobs"),
        (f"/namespaces/{ns}/jobs?limit=25&offset=0", "jobs"),
        (f"/namespaces/{ns}/jobs/{job}", "latestRuns"),
        (f"/namespaces/{ns}/jobs/{job}/runs?limit=10&offset=0", "runs"),
        (f"/jobs/runs/{LOAD_RUN}/facets?type=run", "facets"),
        (f"/jobs/runs/{LOAD_RUN}/facets?type=job", "facets"),
        (f"/namespaces/{s3}/datasets?limit=20&offset=0", "datasets"),
        (f"/namespaces/{s3}/datasets/{daily}", "columnLineage"),
        (f"/namespaces/{s3}/datasets/{daily}/versions?limit=10&offset=0", "versions"),
        (f"/lineage?nodeId=dataset:{s3}:{daily}&depth=2", "graph"),
        (f"/lineage?nodeId=job:{ns}:{job}&depth=5", "graph"),
        (f"/column-lineage?nodeId=dataset:{s3}:{daily}&depth=2&withDownstream=true", "graph"),
        ("/search?q=orders&sort=NAME&limit=100", "results"),
        ("/search?q=orders&sort=NAME&limit=100&filter=DATASET", "results"),
        (
            "/events/lineage?limit=100&before=&after=&offset=0&sortDirection=desc",
            "events",
        ),
        ("/stats/lineage-events?period=DAY&timezone=America/New_York", None),
        ("/stats/jobs?period=WEEK&timezone=UTC", None),
        ("/stats/datasets?period=DAY&timezone=UTC", None),
        ("/stats/sources?period=WEEK&timezone=UTC", None),
    ]


@pytest.mark.parametrize("mode", ["mount", "marquez-host"])
def test_every_ui_request_answers(world, read_client, mode):
    prefix = "/marquez/api/v1" if mode == "mount" else "/api/v1"
    host = "marquez.example.com" if mode == "marquez-host" else "catalog.example.com"
    settings = {"ENABLED": True, "HOSTS": ["marquez.example.com"], "ALLOW_ANONYMOUS_READS": False}
    with override_settings(MARQUEZ_API=settings):
        for path, key in ui_requests():
            url = prefix + path
            response = read_client.get(url, RAW_URI=url, HTTP_HOST=host)
            assert response.status_code == 200, (url, response.content)
            body = response.json()
            if key is None:
                assert isinstance(body, list) and body
            else:
                assert key in body, (url, body)
            if "graph" in body:
                assert body["graph"], url
        url = f"{prefix}/namespaces/{encode(PG)}/datasets/shop.public.orders"
        dataset = read_client.get(url, RAW_URI=url, HTTP_HOST=host)
        assert dataset.json()["namespace"] == PG

"""A write body may hold at most LINEAGE_MAX_JSON_VALUES JSON values (ADR 0166): parsed, a
value costs 50-150 bytes of memory however small it is, so a 65 KB gzip of ``[{},{},...]``
(64 MiB inflated) took 1.85 GiB of a web process before its 413. The count is read before
anything is parsed, on all four write endpoints, JSON and NDJSON, plain and gzipped."""

import gzip
import tracemalloc

import orjson
import pytest
from django.conf import settings
from django.test import Client, override_settings

from ingest.models import Event
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, run_event

pytestmark = pytest.mark.django_db
VALUES = {"LINEAGE": {**settings.LINEAGE, "MAX_JSON_VALUES": 400}}


def _post(client: Client, url: str, body: bytes, kind: str = "application/json", **extra):
    return client.post(url, data=body, content_type=kind, **extra)


@override_settings(**VALUES)
@pytest.mark.parametrize("url", [LINEAGE, BATCH, EDGES, METADATA])
def test_a_body_of_more_values_than_the_limit_is_a_413_and_stores_nothing(
    ingest_client: Client, url: str
) -> None:
    dense = b"[" + b"{}," * 400 + b"{}]"  # 401 values in 1,204 bytes
    answer = _post(ingest_client, url, dense)
    assert answer.status_code == 413, answer.content
    assert "LINEAGE_MAX_JSON_VALUES" in answer.json()["detail"]
    gzipped = _post(ingest_client, url, gzip.compress(dense), HTTP_CONTENT_ENCODING="gzip")
    assert gzipped.status_code == 413
    assert not Event.objects.exists()


@override_settings(**VALUES)
def test_events_under_the_limit_are_stored_and_ndjson_is_counted_whole(
    ingest_client: Client,
) -> None:
    # An event counts 17 values: 23 of them fit (391), 24 are refused (408), each event
    # alone well under the limit.
    fit = b"\n".join(orjson.dumps(run_event()) for _ in range(23))
    assert _post(ingest_client, BATCH, fit, "application/x-ndjson").status_code == 200
    over = b"\n".join(orjson.dumps(run_event()) for _ in range(24))
    answer = _post(ingest_client, BATCH, over, "application/x-ndjson")
    assert answer.status_code == 413, answer.content
    assert Event.objects.count() == 23


def test_a_gzip_of_empty_objects_is_refused_before_it_is_parsed(ingest_client: Client) -> None:
    limit = settings.LINEAGE["MAX_DECOMPRESSED_BYTES"]
    bomb = gzip.compress(b"[" + b"{}," * (limit // 3 - 1) + b"{}]", compresslevel=9)
    assert len(bomb) < 100_000
    tracemalloc.start()
    try:
        answer = _post(ingest_client, LINEAGE, bomb, HTTP_CONTENT_ENCODING="gzip")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer.status_code == 413, answer.content
    # The inflated body and its pieces, never its 22 million parsed objects (1.85 GiB).
    assert peak < 3 * limit, peak

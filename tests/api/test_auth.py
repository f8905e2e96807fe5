"""Who may read: read tokens and staff sessions; ingest tokens 403, nobody 401."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from ingest.services import revoke_token

READ_PATHS = [
    "/api/v1/namespaces",
    "/api/v1/jobs",
    "/api/v1/runs",
    "/api/v1/datasets",
    "/api/v1/datasets/lookup?namespace=a&name=b",
    "/api/v1/lineage/graph?node=dataset:1",
    "/api/v1/lineage/diff?node=dataset:1&from=2026-01-01&to=2026-02-01",
    "/api/v1/search?q=orders",
    "/api/v1/events",
    "/api/v1/events/export",
    "/api/v1/stats",
]


@pytest.mark.django_db
@pytest.mark.parametrize("path", READ_PATHS)
def test_without_credentials_is_401_problem(path):
    response = Client().get(path)
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "urn:lineage-catalog:problem:unauthenticated"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("path", READ_PATHS)
def test_ingest_token_is_refused_with_403(ingest_client, path):
    response = ingest_client.get(path)
    assert response.status_code == 403
    assert response.json()["type"] == "urn:lineage-catalog:problem:forbidden"
    # Says which token it takes: the ingest token make run printed first reads nothing.
    assert "takes a read token (lc_read_" in response.json()["detail"]


def test_unknown_token_is_401(db):
    response = Client(HTTP_AUTHORIZATION="Bearer nope").get("/api/v1/jobs")
    assert response.status_code == 401


def test_revoked_read_token_is_401(read_token):
    from ingest.models import ApiToken

    revoke_token(ApiToken.objects.get(scope="read").id)
    response = Client(HTTP_AUTHORIZATION=f"Bearer {read_token}").get("/api/v1/jobs")
    assert response.status_code == 401


def test_a_token_revoked_while_in_use_stops_working_within_5_seconds(read_token, monkeypatch):
    """docs/api.md: a revoked token stops working within 5 seconds. A token in use is
    cached per process; once revoked it may read until the cached entry is 5 s old, and
    not after (the process's clock moved on, not the test's sleep)."""
    import time as real_time

    from ingest import authentication
    from ingest.models import ApiToken

    class Clock:
        offset = 0.0

        @classmethod
        def monotonic(cls) -> float:
            return real_time.monotonic() + cls.offset

    monkeypatch.setattr(authentication, "time", Clock)
    reader = Client(HTTP_AUTHORIZATION=f"Bearer {read_token}")
    assert reader.get("/api/v1/jobs").status_code == 200  # resolved and cached
    revoke_token(ApiToken.objects.get(scope="read").id)
    Clock.offset = 5.0
    assert reader.get("/api/v1/jobs").status_code == 401
    Clock.offset = 60.0
    assert reader.get("/api/v1/jobs").status_code == 401  # and never again


def test_read_token_reads(read_client):
    assert read_client.get("/api/v1/jobs").status_code == 200


def test_staff_session_reads_and_plain_user_is_refused(db):
    user_model = get_user_model()
    staff = user_model.objects.create_user("steward", password="x", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_dataset"))
    plain = user_model.objects.create_user("someone", password="x")
    client = Client()
    client.force_login(staff)
    assert client.get("/api/v1/datasets").status_code == 200
    client.force_login(plain)
    assert client.get("/api/v1/datasets").status_code == 403


def test_schema_and_docs_are_public(db):
    assert Client().get("/api/schema/").status_code == 200
    assert Client().get("/api/docs/").status_code == 200


def test_throttling_applies_when_a_read_rate_is_configured(read_client, settings):
    from django.core.cache import cache

    cache.clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"read": "2/min"},
    }
    codes = [read_client.get("/api/v1/jobs").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert read_client.get("/api/v1/jobs").json()["type"].endswith(":throttled")
    cache.clear()


def test_no_throttling_by_default(read_client):
    codes = {read_client.get("/api/v1/jobs").status_code for _ in range(20)}
    assert codes == {200}

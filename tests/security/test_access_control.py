"""Who may call what, for every route under /api/v1/ (discovered, so new ones are covered).

Read side: no token 401, a wrong or revoked token 401, an ingest token 403, a read token or
a staff session with the view permissions allowed (tests/security/test_staff_reads.py).
Ingest side: the mirror image. Admin: staff login with CSRF.
"""

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from catalog.permissions import READERS, apply_registry_permissions
from ingest.authentication import clear_token_cache
from ingest.services import create_token, revoke_token
from tests.ingest.helpers import dumps, run_event

pytestmark = pytest.mark.django_db
INGEST_PATHS = {"/api/v1/lineage", "/api/v1/lineage/batch", "/api/v1/lineage/edges"}
WRITE_AND_READ = {"/api/v1/metadata"}  # POST ingests, GET reads


def _routes(resolver: URLResolver | None = None, prefix: str = "") -> Iterator[str]:
    for entry in (resolver or get_resolver()).url_patterns:
        pattern = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _routes(entry, pattern)
        elif isinstance(entry, URLPattern):
            yield pattern


def _concrete(pattern: str) -> str:
    path = re.sub(r"\(\?P<\w+>[^)]*\)", "1", pattern)  # router regex groups
    path = re.sub(r"<(?:\w+:)?\w+>", "1", path)  # path converters
    return "/" + path.replace("^", "").replace("$", "").replace("\\", "").lstrip("/")


API_PATHS = sorted({_concrete(p) for p in _routes() if p.startswith("api/v1/")})
READ_PATHS = [path for path in API_PATHS if path not in INGEST_PATHS]


def test_routes_were_discovered() -> None:
    assert set(API_PATHS) >= INGEST_PATHS
    assert {"/api/v1/events", "/api/v1/datasets", "/api/v1/lineage/graph"} <= set(READ_PATHS)


def _bearer(secret: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


@pytest.mark.parametrize("path", READ_PATHS)
def test_read_side_refuses_anonymous_wrong_revoked_and_ingest_tokens(path: str) -> None:
    assert Client().get(path).status_code == 401
    assert _bearer("lc_read_not-a-real-token").get(path).status_code == 401
    token, secret = create_token("revoked reader", "read")
    revoke_token(token.id)
    clear_token_cache()
    assert _bearer(secret).get(path).status_code == 401
    ingest_secret = create_token("writer", "ingest")[1]
    response = _bearer(ingest_secret).get(path)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("path", READ_PATHS)
def test_read_side_admits_read_tokens_and_staff_sessions(path: str) -> None:
    reader = _bearer(create_token("reader", "read")[1])
    assert reader.get(path).status_code not in (401, 403, 500)
    # A staff session of the reader group (catalog/permissions.py): view permissions needed.
    apply_registry_permissions()
    staff = get_user_model().objects.create_user("steward", password="pw", is_staff=True)
    staff.groups.add(Group.objects.get(name=READERS))
    session = Client()
    session.force_login(staff)
    assert session.get(path).status_code not in (401, 403, 500)
    plain = get_user_model().objects.create_user("someone", password="pw")
    not_staff = Client()
    not_staff.force_login(plain)
    assert not_staff.get(path).status_code == 403


@pytest.mark.parametrize("path", sorted(INGEST_PATHS | WRITE_AND_READ))
def test_ingest_side_refuses_anonymous_wrong_revoked_and_read_tokens(path: str) -> None:
    body = dumps(run_event())

    def post(client: Client) -> int:
        return client.post(path, data=body, content_type="application/json").status_code

    assert post(Client()) == 401
    assert post(_bearer("lc_ingest_not-a-real-token")) == 401
    token, secret = create_token("revoked writer", "ingest")
    revoke_token(token.id)
    clear_token_cache()
    assert post(_bearer(secret)) == 401
    assert post(_bearer(create_token("reader", "read")[1])) == 403
    staff = get_user_model().objects.create_user("steward", password="pw", is_staff=True)
    session = Client()
    session.force_login(staff)
    assert post(session) == 401  # a browser session never writes events


def test_schema_and_docs_are_public_and_probes_need_nothing() -> None:
    for path in ("/api/schema/", "/api/docs/", "/healthz", "/readyz"):
        assert Client().get(path).status_code == 200, path


def test_admin_requires_a_staff_login_with_csrf() -> None:
    assert Client().get("/admin/").status_code == 302
    get_user_model().objects.create_superuser("root", password="correct horse")
    browser = Client(enforce_csrf_checks=True)
    refused = browser.post("/admin/login/", {"username": "root", "password": "correct horse"})
    assert refused.status_code == 403  # no CSRF token
    page = browser.get("/admin/login/")
    token = page.cookies["csrftoken"].value
    accepted = browser.post(
        "/admin/login/",
        {"username": "root", "password": "correct horse", "csrfmiddlewaretoken": token},
    )
    assert accepted.status_code == 302
    assert browser.get("/admin/").status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/v1/no-such-thing", "/api/v1/runs/a/b", "/api/v1/datasets/1/x"]
)
def test_unknown_api_urls_are_problem_documents(path: str) -> None:
    reader = _bearer(create_token("reader", "read")[1])
    response = reader.get(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"] == "urn:lineage-catalog:problem:not-found"


def test_unknown_pages_outside_the_api_stay_html() -> None:
    response = Client().get("/no-such-page")
    assert response.status_code == 404
    assert "problem+json" not in response["Content-Type"]


MARQUEZ_READS = ["/marquez/api/v1/namespaces", "/marquez/api/v1/search?q=x", "/marquez/api/v1/jobs"]


@pytest.mark.parametrize("path", [*READ_PATHS, *MARQUEZ_READS])
def test_a_curate_token_reads_nothing(path: str) -> None:
    """docs/security.md: a curate token retires and tags through the Marquez mount's
    writes (docs/admin.md) and does nothing else: no read of either API."""
    curator = _bearer(create_token("curator", "curate")[1])
    assert curator.get(path).status_code == 403


@pytest.mark.parametrize("path", sorted(INGEST_PATHS | WRITE_AND_READ))
def test_a_curate_token_writes_no_event(path: str) -> None:
    from ingest.models import Event

    curator = _bearer(create_token("curator", "curate")[1])
    response = curator.post(path, data=dumps(run_event()), content_type="application/json")
    assert response.status_code == 403
    assert not Event.objects.exists()

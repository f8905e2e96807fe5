"""Who may ingest: ingest tokens only, unless anonymous ingest is explicitly allowed."""

from types import SimpleNamespace

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings

from ingest.models import ApiToken, Event
from ingest.services import create_token, hash_token, revoke_token
from tests.ingest.helpers import BATCH, EDGES, LINEAGE, METADATA, post_json, run_event

pytestmark = pytest.mark.django_db
ENDPOINTS = [LINEAGE, BATCH, EDGES, METADATA]


@pytest.mark.parametrize("url", ENDPOINTS)
def test_no_token_is_401_with_a_challenge(url: str) -> None:
    response = post_json(Client(), url, run_event())
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["type"] == "urn:lineage-catalog:problem:unauthenticated"
    assert not Event.objects.exists()


@pytest.mark.parametrize("url", ENDPOINTS)
def test_read_token_is_403(read_client, url: str) -> None:
    response = post_json(read_client, url, run_event())
    assert response.status_code == 403
    assert response.json()["type"] == "urn:lineage-catalog:problem:forbidden"
    # Says which token it takes, not only that this one is wrong.
    assert "takes an ingest token (lc_ingest_" in response.json()["detail"]


@pytest.mark.parametrize(
    "header", ["Bearer lc_ingest_wrong", "Token abc", "Bearer ", "Basic dXNlcjpwYXNz"]
)
def test_wrong_or_malformed_token_is_401(header: str) -> None:
    response = post_json(Client(HTTP_AUTHORIZATION=header), LINEAGE, run_event())
    assert response.status_code == 401


def test_revoked_token_is_refused() -> None:
    token, secret = create_token("soon revoked", "ingest")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert post_json(client, LINEAGE, run_event()).status_code == 201
    assert revoke_token(token.id)
    from ingest.authentication import clear_token_cache

    clear_token_cache()  # revocation is seen within the cache lifetime; here at once
    assert post_json(client, LINEAGE, run_event()).status_code == 401


def test_a_revoked_token_stops_working_once_its_five_seconds_in_the_cache_end(
    monkeypatch,
) -> None:
    """docs/ingest.md: tokens are looked up "cached 5 s per process". The test above clears
    the cache; this one lets it run out, on the process's clock, with no clearing."""
    from ingest import authentication

    clock = [1_000.0]
    monkeypatch.setattr(authentication, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    token, secret = create_token("revoked while cached", "ingest")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert post_json(client, LINEAGE, run_event()).status_code == 201  # now cached
    assert revoke_token(token.id)
    clock[0] += 4.9
    assert post_json(client, LINEAGE, run_event()).status_code == 201  # still cached
    clock[0] += 0.2
    assert post_json(client, LINEAGE, run_event()).status_code == 401
    # And an unknown token is not remembered as unknown past its five seconds either.
    later, later_secret = create_token("not yet", "ingest")
    unknown = Client(HTTP_AUTHORIZATION=f"Bearer {later_secret}x")
    assert post_json(unknown, LINEAGE, run_event()).status_code == 401
    ApiToken.objects.filter(id=later.id).update(key_hash=hash_token(later_secret + "x"))
    clock[0] += 4.9
    assert post_json(unknown, LINEAGE, run_event()).status_code == 401
    clock[0] += 0.2
    assert post_json(unknown, LINEAGE, run_event()).status_code == 201


def test_anonymous_ingest_only_when_explicitly_allowed() -> None:
    assert settings.LINEAGE["ALLOW_ANONYMOUS_INGEST"] is False
    with override_settings(LINEAGE={**settings.LINEAGE, "ALLOW_ANONYMOUS_INGEST": True}):
        assert post_json(Client(), LINEAGE, run_event()).status_code == 201


def test_only_the_hash_is_stored_and_use_is_recorded() -> None:
    token, secret = create_token("hash check", "ingest")
    stored = ApiToken.objects.get(id=token.id)
    assert secret not in {stored.key_hash, stored.prefix, stored.name}
    assert stored.key_hash == hash_token(secret)
    assert secret.startswith(stored.prefix)
    assert stored.last_used_at is None
    post_json(Client(HTTP_AUTHORIZATION=f"Bearer {secret}"), LINEAGE, run_event())
    stored.refresh_from_db()
    assert stored.last_used_at is not None


def test_create_and_revoke_token_commands(capsys) -> None:
    call_command("create_token", "--scope", "ingest", "--name", "spark prod")
    output = capsys.readouterr().out
    secret = output.strip().splitlines()[-1]
    token = ApiToken.objects.get(name="spark prod")
    assert token.key_hash == hash_token(secret)
    assert (
        post_json(Client(HTTP_AUTHORIZATION=f"Bearer {secret}"), LINEAGE, run_event()).status_code
        == 201
    )
    call_command("revoke_token", token.prefix)
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_create_token_refuses_an_unknown_scope() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("create_token", "--scope", "admin")


@pytest.mark.parametrize("name", ["x" * 201, "a\x00b"])
def test_create_token_refuses_a_name_the_table_cannot_hold(name: str) -> None:
    """A DataError traceback before; no token is made."""
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--name must be at most 200 characters"):
        call_command("create_token", "--scope", "ingest", "--name", name)
    assert not ApiToken.objects.exists()


def test_a_flood_of_unknown_tokens_does_not_evict_valid_ones(
    django_assert_num_queries, monkeypatch
) -> None:
    """Unknown tokens are cached apart and bounded apart: flooding them (more than any
    cache bound) once cleared every entry, and valid tokens then cost a query each."""
    from ingest import authentication
    from ingest.authentication import _resolve

    monkeypatch.setattr(authentication, "_CACHE_SECONDS", 600.0)  # the flood takes seconds
    # Both bounds made small, so that 60 made-up tokens flood them as 10,050 flood the
    # shipped 10,000 (each costs a query: 11 CPU s at the shipped size). A shared cache
    # bounded by either would be cleared by the flood and fail the first assertion below.
    monkeypatch.setattr(authentication, "_MAX_KNOWN", 50)
    monkeypatch.setattr(authentication, "_MAX_UNKNOWN", 50)
    _, secret = create_token("busy producer", "ingest")
    assert _resolve(secret) is not None  # cached
    for number in range(60):
        assert _resolve(f"lc_ingest_made_up_{number}") is None
    with django_assert_num_queries(0):
        assert _resolve(secret) is not None
    with django_assert_num_queries(0):  # the newest unknown ones are still cached as unknown
        assert _resolve("lc_ingest_made_up_59") is None


def test_a_new_secret_key_logs_admin_users_out_and_leaves_tokens_working(settings) -> None:
    """docs/deploy.md "Rotate tokens" and "Back up and restore": tokens do not depend on
    DJANGO_SECRET_KEY (a restore with another key, or a rotation, keeps every producer
    writing); admin sessions do, so rotating it logs everyone out of the admin."""
    from django.contrib.auth.models import User

    _, ingest = create_token("producer", "ingest")
    _, read = create_token("reader", "read")
    staff = Client()
    staff.force_login(User.objects.create_superuser("root", password="pw"))
    assert staff.get("/admin/").status_code == 200

    settings.SECRET_KEY = "a-rotated-secret-key-" + "r" * 40

    assert staff.get("/admin/").status_code == 302  # to the login page
    assert staff.get("/api/v1/datasets").status_code == 401
    assert (
        post_json(Client(HTTP_AUTHORIZATION=f"Bearer {ingest}"), LINEAGE, run_event()).status_code
        == 201
    )
    assert Client(HTTP_AUTHORIZATION=f"Bearer {read}").get("/api/v1/datasets").status_code == 200

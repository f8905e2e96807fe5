"""The initial tokens of the Secret, registered by the chart's migration hook (docs/deploy.md
"Install" and "Rotate tokens"): the hook's own script, as the chart renders it, run the way
its container runs it (`manage.py shell --no-imports --command`) on the test database.

What the docs promise: each is registered once and then works with its scope; only its
sha256 is stored; the admin lists it by the prefix every other token of its scope has;
an upgrade (the hook again) leaves it alone, and a revoked one stays revoked, so rotating
is "create a new token, revoke the old one, remove the key from the Secret". A malformed
one stops the hook (and so the upgrade) before anything is stored.
"""

import secrets

import orjson
import pytest
from django.core.management import call_command
from django.test import Client

from ingest.authentication import clear_token_cache
from ingest.models import ApiToken
from ingest.services import create_token, hash_token, revoke_token
from tests.deploy.rendering import render
from tests.ingest.helpers import LINEAGE, post_json, run_event

pytestmark = pytest.mark.django_db


def _hook(monkeypatch, capsys, **tokens: str) -> str:
    """The migrate Job's register-initial-tokens container, with ``tokens`` in its Secret."""
    (register,) = render("initial-tokens").named("Job", "-migrate")["spec"]["template"]["spec"][
        "containers"
    ]
    assert register["command"][:5] == ["python", "manage.py", "shell", "--no-imports", "--command"]
    for scope in ("ingest", "read"):
        name = f"LINEAGE_INITIAL_{scope.upper()}_TOKEN"
        if scope in tokens:
            monkeypatch.setenv(name, tokens[scope])
        else:
            monkeypatch.delenv(name, raising=False)
    call_command("shell", "--no-imports", "--command", register["command"][5])
    return capsys.readouterr().out


def _answers(secret: str) -> tuple[int, int]:
    """The status of an ingest and of a read with ``secret``, past the token cache."""
    clear_token_cache()
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return post_json(client, LINEAGE, run_event()).status_code, client.get(
        "/api/v1/datasets"
    ).status_code


def test_initial_tokens_are_registered_once_by_hash_and_a_revoked_one_stays_revoked(
    monkeypatch, capsys
) -> None:
    ingest = f"lc_ingest_{secrets.token_urlsafe(32)}"
    read = f"lc_read_{secrets.token_urlsafe(32)}"

    output = _hook(monkeypatch, capsys, ingest=ingest, read=read)

    assert "initial ingest token" in output and "registered" in output
    assert ingest not in output and read not in output
    assert _answers(ingest) == (201, 403)
    assert _answers(read) == (403, 200)
    stored = {token.scope: token for token in ApiToken.objects.all()}
    assert set(stored) == {"ingest", "read"}
    for scope, secret in (("ingest", ingest), ("read", read)):
        token = stored[scope]
        assert token.key_hash == hash_token(secret)
        row = orjson.dumps(list(ApiToken.objects.filter(pk=token.pk).values()), default=str)
        assert secret.encode() not in row  # only the hash
        made, _ = create_token("made by the command", scope)
        assert len(token.prefix) == len(made.prefix) and secret.startswith(token.prefix)

    # An upgrade runs the hook again: nothing new, and the revoked token stays revoked.
    revoke_token(stored["ingest"].pk)
    output = _hook(monkeypatch, capsys, ingest=ingest, read=read)
    assert output.count("already known") == 2
    assert ApiToken.objects.filter(key_hash__in=[hash_token(ingest), hash_token(read)]).count() == 2
    assert ApiToken.objects.get(pk=stored["ingest"].pk).revoked_at is not None
    assert _answers(ingest) == (401, 401)
    assert _answers(read) == (403, 200)


@pytest.mark.parametrize(
    "tokens",
    [
        {"ingest": "lc_ingest_short"},
        {"read": f"lc_ingest_{secrets.token_urlsafe(32)}"},  # another scope's token
        {"ingest": secrets.token_urlsafe(40)},
    ],
)
def test_a_malformed_initial_token_stops_the_hook_and_stores_nothing(
    tokens: dict[str, str], monkeypatch, capsys
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _hook(monkeypatch, capsys, **tokens)
    assert "40+ characters" in str(stopped.value)
    assert not any(secret in str(stopped.value) for secret in tokens.values())
    assert not ApiToken.objects.exists()

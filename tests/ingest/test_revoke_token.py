"""manage.py revoke_token: a leaked token is revoked by the token itself, by its prefix, by
its name or by its id; no match and several matches are readable refusals that revoke
nothing and never repeat the secret (issue 27 item 9)."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from ingest.authentication import clear_token_cache
from ingest.models import ApiToken
from ingest.services import create_token
from tests.ingest.helpers import LINEAGE, post_json, run_event

pytestmark = pytest.mark.django_db


def _revoke(text: str, capsys) -> str:
    call_command("revoke_token", text)
    return capsys.readouterr().out


def _refusal(text: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("revoke_token", text)
    return str(refused.value)


def _active() -> set[int]:
    return set(ApiToken.objects.active().values_list("id", flat=True))


def test_the_leaked_token_itself_revokes_it_and_stops_it_working(capsys) -> None:
    leaked, secret = create_token("spark prod", "ingest")
    other, _ = create_token("airflow", "ingest")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert post_json(client, LINEAGE, run_event()).status_code == 201

    output = _revoke(secret, capsys)

    assert f"#{leaked.id}" in output and "spark prod" in output and secret not in output
    assert _active() == {other.id}
    assert ApiToken.objects.get(id=leaked.id).revoked_at is not None
    clear_token_cache()  # the per-process cache holds a token for 5 s (docs/security.md)
    assert post_json(client, LINEAGE, run_event()).status_code == 401


@pytest.mark.parametrize("scope", ["ingest", "read", "curate"])
def test_the_prefix_the_admin_shows_or_a_longer_start_revokes_it(scope: str, capsys) -> None:
    first, _ = create_token("first", scope)
    _, second_secret = create_token("second", scope)
    assert len(first.prefix) == len(scope) + 8  # what the admin lists

    _revoke(first.prefix, capsys)
    # docs/security.md used to promise 16 characters: any start of the token past its prefix.
    _revoke(second_secret[:16], capsys)

    assert _active() == set()


def test_the_name_or_the_id_revokes_it(capsys) -> None:
    named, _ = create_token("dbt nightly", "ingest")
    numbered, _ = create_token("trino", "read")

    assert "dbt nightly" in _revoke("dbt nightly", capsys)
    assert "trino" in _revoke(str(numbered.id), capsys)

    assert _active() == set() and named.id != numbered.id


def test_several_matches_are_refused_with_the_candidates_and_nothing_revoked() -> None:
    one, _ = create_token("spark", "ingest")
    two, _ = create_token("spark", "read")
    three, _ = create_token("kafka", "ingest")
    four, _ = create_token("flink", "ingest")
    # Four random characters: two tokens can share a prefix.
    ApiToken.objects.filter(id=four.id).update(prefix=three.prefix)

    by_name = _refusal("spark")
    by_prefix = _refusal(three.prefix)

    assert "2 active tokens match 'spark'" in by_name
    assert f"#{one.id}" in by_name and f"#{two.id}" in by_name and "by its id" in by_name
    assert f"#{three.id}" in by_prefix and f"#{four.id}" in by_prefix
    assert _active() == {one.id, two.id, three.id, four.id}
    # Once one of them is revoked, the prefix names the other one alone.
    call_command("revoke_token", str(four.id))
    call_command("revoke_token", three.prefix)
    assert _active() == {one.id, two.id}


def test_no_match_is_a_readable_refusal_that_does_not_echo_the_secret() -> None:
    kept, secret = create_token("kept", "ingest")
    unknown = "lc_ingest_" + "Z" * 43  # well-formed, never issued
    mistyped = secret[:-1] + ("A" if secret[-1] != "A" else "B")

    never_issued = _refusal(unknown)
    typo = _refusal(mistyped)

    assert "No token is this secret" in never_issued and unknown not in never_issued
    assert "No token is this secret" in typo and mistyped not in typo
    # The token sharing the typo's prefix is offered by id, not revoked on a guess.
    assert f"#{kept.id}" in typo
    assert "No token has the name 'nobody'" in _refusal("nobody")
    assert "No token has the prefix 'lc_read_QQQQ'" in _refusal("lc_read_QQQQ")
    assert "shorter than a token's prefix" in _refusal("lc_ingest_A")
    assert "No token has the id '999999'" in _refusal("999999")
    assert _active() == {kept.id}


def test_revoking_twice_says_it_is_already_revoked(capsys) -> None:
    token, secret = create_token("old", "ingest")
    _revoke(secret, capsys)
    assert "already revoked" in _refusal(secret)
    assert "already revoked" in _refusal(token.prefix)


def test_a_name_that_reads_as_an_id_or_a_prefix_is_not_passed_over(capsys) -> None:
    """revoke_token 7 revoked token #7 even when the token the operator meant is named "7",
    and a token named like a prefix could not be revoked by its name at all."""
    first, _ = create_token("trino", "read")
    digits, _ = create_token(str(first.id), "ingest")
    prefix_like, _ = create_token("lc_ingest_backup", "ingest")

    both = _refusal(str(first.id))
    assert f"#{first.id}" in both and f"#{digits.id}" in both
    assert _active() == {first.id, digits.id, prefix_like.id}

    assert "'lc_ingest_backup'" in _revoke("lc_ingest_backup", capsys)
    call_command("revoke_token", first.prefix)
    # The only active token the text names now: the one named by it.
    assert f"#{digits.id}" in _revoke(str(first.id), capsys)
    assert _active() == set()
    assert "No token has the id '99999999999999999999'" in _refusal("99999999999999999999")


@pytest.mark.parametrize("pasted", ["Bearer {}", "'{}'", " Bearer {} "])
def test_a_token_pasted_with_what_surrounds_it_is_not_echoed(pasted: str) -> None:
    """The Authorization header's value, or the token in quotes, matches no token and no
    name: the refusal names it by its prefix only (it quoted the whole secret)."""
    kept, secret = create_token("kept", "ingest")

    refusal = _refusal(pasted.format(secret))

    assert "No token has the name" in refusal and secret not in refusal
    assert secret[: len("lc_ingest_") + 4] + "…" in refusal
    assert _active() == {kept.id}


@pytest.mark.parametrize("digits", ["²", "٣"])
def test_a_digit_that_is_not_ascii_is_a_name_not_a_traceback(digits: str, capsys) -> None:
    """str.isdigit says yes to "²" and int() refuses it (a ValueError traceback); "٣" read
    as the id 3. Both are names."""
    named, _ = create_token(digits, "ingest")
    other, _ = create_token("other", "ingest")

    assert f"#{named.id}" in _revoke(digits, capsys)
    assert _active() == {other.id}
    assert "No token has the name" in _refusal("³")

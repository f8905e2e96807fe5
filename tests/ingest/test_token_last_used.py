"""ingest/authentication.py: "``last_used_at`` is written at most once a minute per token"
(ADR 0200). A token looked up again once its cache entry has expired (each few seconds, and
in every other process) writes nothing while its last use is under a minute old, and one
UPDATE once it is older."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ingest import authentication
from ingest.models import ApiToken
from ingest.services import create_token

pytestmark = pytest.mark.django_db


def _token_writes(secret: str) -> int:
    authentication.clear_token_cache()  # the entry expired, or another process looks it up
    with CaptureQueriesContext(connection) as queries:
        assert authentication._resolve(secret) is not None
    return sum(query["sql"].startswith(f'UPDATE "{ApiToken._meta.db_table}"') for query in queries)


def test_last_used_is_written_at_most_once_a_minute_per_token() -> None:
    token, secret = create_token("busy producer", "ingest")
    assert _token_writes(secret) == 1  # never used: written
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    for _ in range(3):
        assert _token_writes(secret) == 0
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(seconds=61))
    assert _token_writes(secret) == 1
    assert ApiToken.objects.get(pk=token.pk).last_used_at > timezone.now() - timedelta(seconds=5)

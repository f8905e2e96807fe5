"""`module_transaction` (tests/conftest.py, ADR 0113): rows a module's tests share are built
once, and each test starts from exactly those rows. The tests run in file order (no random
ordering is installed): the first writes, the next must not see it and deletes, the third
must see the shared row again and runs a durable service block inside, the last sees only
the shared row. Nothing of it is ever committed: another connection sees none of it.
"""

from typing import Any

import psycopg
import pytest
from django.db import connection, transaction

from ingest.models import ApiToken
from ingest.services import create_token

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _shared(module_transaction: Any) -> int:
    with module_transaction():
        token, _ = create_token("shared", "read")
        return token.pk


@pytest.fixture
def shared(_shared: int, db: None) -> int:
    return _shared


def test_a_test_changes_and_adds_rows(shared: int) -> None:
    assert connection.in_atomic_block
    ApiToken.objects.filter(pk=shared).update(name="changed by the first test")
    create_token("the first test's own", "ingest")
    assert ApiToken.objects.count() == 2


def test_the_next_starts_from_the_shared_rows_alone(shared: int) -> None:
    assert list(ApiToken.objects.values_list("pk", "name")) == [(shared, "shared")]
    ApiToken.objects.all().delete()


def test_a_durable_block_inside_commits_nothing_past_the_test(shared: int) -> None:
    assert ApiToken.objects.filter(pk=shared).exists()  # the deletion above was undone
    with transaction.atomic(durable=True):
        create_token("durable", "read")
    assert ApiToken.objects.count() == 2


def test_after_them_only_the_shared_rows_are_left(shared: int) -> None:
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["shared"]


def test_nothing_is_committed_where_another_connection_could_see_it(shared: int) -> None:
    with psycopg.connect(**connection.get_connection_params()) as other:
        seen = other.execute(f"SELECT count(*) FROM {ApiToken._meta.db_table}").fetchone()
    assert seen == (0,)

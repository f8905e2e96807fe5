"""`module_transaction` (tests/conftest.py, ADR 0113): rows all of a module's tests read are built
once, and each test starts from exactly those rows. The tests run in file order (no random
ordering is installed): the first writes, the next must not see it and deletes, the third
must see the module's row again and runs a durable service block inside, the last sees only
the module's row. Nothing of it is ever committed: another connection sees none of it.
"""

from typing import Any

import psycopg
import pytest
from django.db import connection, transaction

from ingest.models import ApiToken
from ingest.services import create_token

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _module_token(module_transaction: Any) -> int:
    with module_transaction():
        token, _ = create_token("module_token", "read")
        return token.pk


@pytest.fixture
def module_token(_module_token: int, db: None) -> int:
    return _module_token


def test_a_test_changes_and_adds_rows(module_token: int) -> None:
    assert connection.in_atomic_block
    ApiToken.objects.filter(pk=module_token).update(name="changed by the first test")
    create_token("the first test's own", "ingest")
    assert ApiToken.objects.count() == 2


def test_the_next_starts_from_the_module_rows_alone(module_token: int) -> None:
    assert list(ApiToken.objects.values_list("pk", "name")) == [(module_token, "module_token")]
    ApiToken.objects.all().delete()


def test_a_durable_block_inside_commits_nothing_past_the_test(module_token: int) -> None:
    assert ApiToken.objects.filter(pk=module_token).exists()  # the deletion above was undone
    with transaction.atomic(durable=True):
        create_token("durable", "read")
    assert ApiToken.objects.count() == 2


def test_after_them_only_the_module_rows_are_left(module_token: int) -> None:
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["module_token"]


def test_nothing_is_committed_where_another_connection_could_see_it(module_token: int) -> None:
    with psycopg.connect(**connection.get_connection_params()) as other:
        seen = other.execute(f"SELECT count(*) FROM {ApiToken._meta.db_table}").fetchone()
    assert seen == (0,)

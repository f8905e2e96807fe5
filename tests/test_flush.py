"""tests/flush.py: a transactional test's flush truncates the tables that hold rows, keeps
post_migrate's rows a test left as they were, and leaves the database as Django's flush of
every table does."""

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.services import create_token
from tests import flush

pytestmark = pytest.mark.django_db(transaction=True)


def write_rows() -> None:
    """Rows in a few tables, one of them referred to by an empty table (auth_user by
    django_admin_log) and one referring to a post_migrate table (auth_user_groups)."""
    create_token("flush test", "read")
    user = User.objects.create_user("flushed")
    user.groups.add(Group.objects.order_by("id").first())


# post_migrate's rows by what they name: their ids are new after each flush.
POST_MIGRATE_ROWS = {
    "django_content_type": "SELECT app_label, model FROM django_content_type",
    "auth_permission": "SELECT t.app_label, t.model, p.codename, p.name FROM auth_permission p"
    " JOIN django_content_type t ON t.id = p.content_type_id",
    "auth_group": "SELECT name FROM auth_group",
    "auth_group_permissions": "SELECT g.name, p.codename, t.app_label FROM auth_group_permissions"
    " x JOIN auth_group g ON g.id = x.group_id JOIN auth_permission p ON p.id = x.permission_id"
    " JOIN django_content_type t ON t.id = p.content_type_id",
}


def database_state() -> dict[str, Any]:
    """Every table's number of rows, and post_migrate's rows by what they name."""
    state: dict[str, Any] = {}
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.django_table_names(only_existing=True)):
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            state[table] = cursor.fetchone()[0]
        for table, sql in POST_MIGRATE_ROWS.items():
            cursor.execute(sql)
            state[f"{table} rows"] = sorted(cursor.fetchall())
    return state


def flushed(djangos: bool = False) -> tuple[list[str], dict[str, Any]]:
    """pytest-django's flush (as TransactionTestCase runs it), the suite's or Django's own:
    the TRUNCATE it sent, and what it left."""
    command = flush.djangos_flush() if djangos else flush.written_tables_only()
    with command, CaptureQueriesContext(connection) as queries:
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False)
    truncates = [query["sql"] for query in queries if query["sql"].startswith("TRUNCATE")]
    return truncates, database_state()


def post_migrate_ids() -> dict[str, list[int]]:
    with connection.cursor() as cursor:
        ids = {}
        for table in POST_MIGRATE_ROWS:
            cursor.execute(f"SELECT id FROM {table} ORDER BY id")
            ids[table] = [row[0] for row in cursor.fetchall()]
        return ids


def test_the_flush_truncates_written_tables_and_leaves_what_djangos_flush_leaves() -> None:
    write_rows()
    [everything], after_django = flushed(djangos=True)
    flushed()  # post_migrate's rows are Django's flush's: this one makes and remembers its own
    write_rows()
    kept = post_migrate_ids()
    [written], after_ours = flushed()

    assert after_ours == after_django
    assert after_ours["ingest_api_token"] == 0 and after_ours["auth_user"] == 0
    assert after_ours["auth_permission"] > 100 and after_ours["auth_group_permissions rows"]
    for table in ("ingest_api_token", "auth_user", "auth_user_groups"):
        assert f'"{table}"' in written
    assert written.endswith(" CASCADE;")
    # Tables no test here wrote to are left to the cascade, if anything refers to them.
    assert '"catalog_steward_label"' in everything and '"catalog_steward_label"' not in written
    # post_migrate's rows were left as it made them: kept, not made again.
    assert '"auth_permission"' in everything and '"auth_permission"' not in written
    assert post_migrate_ids() == kept


def test_a_flush_with_nothing_written_still_runs_post_migrate() -> None:
    """An empty statement list would make Django's flush skip post_migrate."""
    flushed()  # what earlier tests left analyzed, truncated
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE auth_group, auth_permission, django_content_type CASCADE")
    assert flush.written_tables(connection) == []
    truncates, state = flushed()
    assert truncates == []
    assert state["auth_permission"] > 100 and state["auth_group"] == 2


def test_flushes_in_this_run_truncate_only_written_tables() -> None:
    """The suite's session fixture (tests/conftest.py) puts it in place."""
    assert flush.flush.sql_flush is flush.sql_flush_written
    assert flush.flush.Command.handle is flush.handle


def delete_the_first_permission() -> None:
    Permission.objects.order_by("id").first().delete()


def rename_a_group() -> None:
    Group.objects.filter(pk=Group.objects.order_by("id").first().pk).update(name="renamed")


def add_a_group() -> None:
    Group.objects.create(name="added")


def analyze_the_permissions() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE auth_permission")


@pytest.mark.parametrize(
    "change", [delete_the_first_permission, rename_a_group, add_a_group, analyze_the_permissions]
)
def test_post_migrate_rows_a_test_changed_are_made_again(change: Any) -> None:
    """A row deleted (fewer rows), changed or added (a newer row version), or a table's
    statistics written: the flush truncates post_migrate's tables and runs it again."""
    flushed()
    _, before = flushed()  # the rows post_migrate made, remembered
    change()
    [written], after = flushed()
    assert after == before
    assert '"auth_permission"' in written and '"auth_group"' in written
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'auth_permission'::regclass")
        assert cursor.fetchone()[0] == -1


def test_post_migrate_rows_a_truncation_would_reach_are_made_again() -> None:
    """Were a post_migrate table to refer to a table a test wrote (here auth_user_groups,
    taken for one), TRUNCATE ... CASCADE would empty it: the flush runs post_migrate."""
    flushed()
    flushed()
    name = connection.settings_dict["NAME"]
    left = flush._left_by_post_migrate[name]
    write_rows()
    taken = {**left, **flush.fingerprints(connection, ["auth_user_groups"])}
    flush._left_by_post_migrate[name] = taken
    try:
        assert not flush.flushed_keeping_post_migrate_rows(connection)
    finally:
        flush._left_by_post_migrate[name] = left
    [written], _ = flushed()
    assert '"auth_user"' in written


def test_a_table_left_analyzed_is_truncated_so_later_plans_do_not_depend_on_it() -> None:
    """ANALYZE writes pg_class outside the transaction: an empty table with statistics is
    flushed too, and is left with its size unknown, as Django's flush of every table left it."""
    flushed()
    assert "catalog_steward_label" not in flush.written_tables(connection)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_steward_label")
    assert "catalog_steward_label" in flush.written_tables(connection)
    [truncate], _ = flushed()
    assert '"catalog_steward_label"' in truncate
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples FROM pg_class WHERE oid = 'catalog_steward_label'::regclass"
        )
        assert cursor.fetchone()[0] == -1

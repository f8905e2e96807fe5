"""What this connection's PostgreSQL session holds prepared, for the tests that pin which
reads are prepared once per connection (ADRs 0119, 0134, 0140)."""

from django.db import connection


def prepared_runs() -> dict[str, int]:
    """Each prepared statement's text and how often it ran (generic plus custom plans)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return dict(cursor.fetchall())


def prepared_by_name(statements: dict[str, str]) -> dict[str, int]:
    """How often each read of ``statements`` (name: a text only its statement holds) ran as a
    prepared statement; a read prepared twice fails the test."""
    found: dict[str, int] = {}
    for statement, runs in prepared_runs().items():
        for name, text in statements.items():
            if text in statement:
                assert name not in found, f"{name} prepared twice: {statement}"
                found[name] = runs
    return found

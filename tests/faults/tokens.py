"""Tokens for the fault tests' own databases, made in the test's process.

The fault tests made each token with a `manage.py create_token` process: a Django start, about
2 CPU seconds and up to 22 s of a loaded machine (ADR 0137, "Not done"), for a row the test
only needs to exist. What they prove is about faults, not the command (which
tests/ingest/test_ingest_auth.py runs), so the same command runs here with
``call_command``, its writes routed to the test's database by a database alias of its own.
"""

import io
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

from django.core.management import call_command
from django.db import connections
from django.test import override_settings

# The fault tests' fixture (tests/faults/conftest.py): new_token(env, scope) -> secret.
NewToken = Callable[[dict[str, str], str], str]


class _Everything:
    """A database router that sends every read and write to one alias."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def db_for_read(self, model: Any, **hints: Any) -> str:
        return self.alias

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return self.alias


@contextmanager
def _routed_to(database_url: str) -> Iterator[None]:
    """Every model read and write of the block on the database of ``database_url``."""
    parts = urlsplit(database_url)
    alias = f"fault_{uuid.uuid4().hex[:8]}"
    connections.settings[alias] = {
        **connections["default"].settings_dict,
        "NAME": unquote(parts.path.lstrip("/")),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
        "USER": unquote(parts.username or "postgres"),
        "PASSWORD": unquote(parts.password or ""),
        "CONN_MAX_AGE": 0,
    }
    try:
        with override_settings(DATABASE_ROUTERS=[_Everything(alias)]):
            yield
    finally:
        connections[alias].close()
        del connections[alias]
        del connections.settings[alias]


def create_token(blocker: Any, env: dict[str, str], scope: str) -> str:
    """`manage.py create_token --scope SCOPE --quiet` on ``env``'s database, in this
    process; returns the secret it printed."""
    out = io.StringIO()
    with blocker.unblock(), _routed_to(env["DATABASE_URL"]):
        call_command("create_token", "--scope", scope, "--quiet", stdout=out)
    return out.getvalue().strip()


def create_superuser(blocker: Any, env: dict[str, str]) -> str:
    """A superuser ``admin`` on ``env``'s database, made in this process; returns its
    password (for tests/faults/admin_session.py)."""
    from django.contrib.auth.models import User

    password = uuid.uuid4().hex
    with blocker.unblock(), _routed_to(env["DATABASE_URL"]):
        User.objects.create_superuser("admin", "admin@example.com", password)
    return password

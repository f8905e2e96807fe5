#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys

# An operator's command that cannot reach PostgreSQL exits with this (sysexits' EX_UNAVAILABLE),
# after one line naming what failed, not a traceback: the failure is the database's, not the
# command's. ``--traceback`` shows the traceback, as for Django's CommandError.
DATABASE_UNAVAILABLE = 69


def _unavailable(error: BaseException) -> bool:
    """Whether ``error`` says PostgreSQL could not be reached or went away: no connection
    (psycopg gives no SQLSTATE), a connection exception (class 08) or an operator's
    intervention (57P: a shutdown, a restart, a terminated backend). A statement's own
    failure (a timeout, a deadlock) is the command's and keeps its traceback."""
    state = getattr(error.__cause__, "sqlstate", None)
    return state is None or state.startswith(("08", "57P"))


def _what_to_do(reason: str) -> str:
    """What the line adds to psycopg's reason: the setting that names the server, and for a
    database not there yet (a newcomer's `make demo` before `make run`) who creates it."""
    if "does not exist" in reason:
        return (
            "; create it (`make run` does on its first run, or createdb) or set DATABASE_URL "
            "to the catalog's database"
        )
    return "; check that it is running and that DATABASE_URL names it"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    from django.core.management import execute_from_command_line
    from django.db import InterfaceError, OperationalError

    try:
        execute_from_command_line(sys.argv)
    except (OperationalError, InterfaceError) as error:
        if "--traceback" in sys.argv or not _unavailable(error):
            raise
        lines = str(error).strip().splitlines() or [type(error).__name__]
        print(
            f"manage.py: PostgreSQL is unavailable: {lines[0]}{_what_to_do(lines[0])}",
            file=sys.stderr,
        )
        sys.exit(DATABASE_UNAVAILABLE)


if __name__ == "__main__":
    main()

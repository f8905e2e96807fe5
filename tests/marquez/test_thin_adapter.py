"""The mount is routing and shapes: every row it shows comes from catalog.reads (ADR 0068).

A query in api/marquez/ is a second read layer growing back; this fails on any: a model
manager (``.objects``), a cursor, a raw query, the connection, or anything of django.db.
Strings and comments do not count (a message may say "cursor pages").
"""

import ast
import io
import tokenize
from pathlib import Path

import pytest

from api.marquez import curation, paths

MOUNT = Path(__file__).resolve().parents[2] / "api" / "marquez"
MODULES = sorted(MOUNT.glob("*.py"))
FORBIDDEN_NAMES = {"objects", "cursor", "connection", "connections"}


def _code_tokens(source: str) -> list[tokenize.TokenInfo]:
    kept = (tokenize.NAME, tokenize.OP)
    return [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type in kept]


def _queries(source: str) -> list[str]:
    found = []
    tokens = _code_tokens(source)
    for index, token in enumerate(tokens):
        following = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if token.type == tokenize.NAME and token.string in FORBIDDEN_NAMES:
            found.append(f"{token.string} (line {token.start[0]})")
        elif token.string == "raw" and following == "(":
            found.append(f"raw( (line {token.start[0]})")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("django.db"):
            found.append(f"from {node.module} import (line {node.lineno})")
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("django.db")]
    return found


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.name)
def test_the_mount_reads_nothing_itself(module: Path) -> None:
    assert _queries(module.read_text()) == []


def test_the_check_finds_a_query() -> None:
    """The check above can fail: each form of a query is caught, and text is not."""
    caught = _queries(
        "from django.db import connection\n"
        "rows = Job.objects.filter(id=1)\n"
        "with connection.cursor() as c:\n"
        "    Run.objects.raw('SELECT 1')\n"
        "message = 'read /api/v1/ cursor pages'  # a cursor in a comment\n"
    )
    assert len(caught) == 7, caught


def test_one_table_names_one_function_per_endpoint() -> None:
    """An endpoint named on several patterns (``events``) answers with one function, so the
    view's lookup by name is the table's; writes have no function and need nothing (a
    named write is one api.marquez.curation.WRITES answers)."""
    written = {handler for _, handler in curation.WRITES}
    for route in paths.ROUTES:
        if route.read is not None:
            assert paths.READS[route.name] is route.read, route
            assert paths.ENDPOINTS[route.name].needs == route.needs, route
        else:
            assert route.needs == () and (not route.name or route.name in written), route

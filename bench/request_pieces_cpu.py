"""Where one read request's CPU goes, piece by piece, in process (issue 42, ADR 0123).

Wraps functions of Django's handler, DRF's dispatch, the ORM and the pagination, each
adding its thread CPU (inclusive) to a total, then calls the shipped WSGI application with
production settings (``bench.read_request_cpu.in_process_reader``) ``--requests`` times for
one path and prints each piece's CPU per request beside the whole request's. The wrappers
add about a microsecond per call; ``SQLCompiler.as_sql`` counts a subquery's compilation
inside its statement's too.

Usage: .venv/bin/python bench/request_pieces_cpu.py --database URL [--requests 2000]
       [--path /api/v1/runs?limit=1 | --path deep]   (deep: /runs at a random deep cursor)
"""

import argparse
import functools
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.read import cursor_at
from bench.read_request_cpu import in_process_reader, tallied, warm_then_time

_spent: dict[str, int] = {}


def _measure(owner: Any, name: str, label: str) -> None:
    function = getattr(owner, name)
    setattr(owner, name, functools.wraps(function)(tallied(function, label, _spent)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--path", default="/api/v1/runs?limit=1")
    options = parser.parse_args()
    call = in_process_reader(options.database, "request-pieces-cpu")
    from django.core.handlers import base, wsgi
    from django.db.backends import utils
    from django.db.models.sql import compiler
    from django.template import response as template_response
    from rest_framework import negotiation, views

    from api import pagination
    from api.views import catalog

    pieces = [
        (wsgi.WSGIHandler, "__call__", "Django's WSGI handler (all of it)"),
        (base.BaseHandler, "resolve_request", "URL resolution"),
        (views.APIView, "dispatch", "DRF's dispatch"),
        (views.APIView, "initial", "  initial"),
        (views.APIView, "perform_authentication", "    authentication"),
        (views.APIView, "check_permissions", "    permissions"),
        (views.APIView, "check_throttles", "    throttles"),
        (views.APIView, "perform_content_negotiation", "    content negotiation"),
        (negotiation.DefaultContentNegotiation, "_get_parsed_accept_list", "      Accept parse"),
        (pagination.CursorPage, "paginate_queryset", "  paginate_queryset"),
        (compiler.SQLCompiler, "as_sql", "    ORM compilation (as_sql)"),
        (utils.CursorWrapper, "execute", "    execute"),
        (catalog, "run_item", "    run items"),
        (pagination.CursorPage, "get_paginated_response", "  links and byte cap"),
        (template_response.SimpleTemplateResponse, "render", "rendering"),
    ]
    for owner, name, label in pieces:
        _measure(owner, name, label)
    rng = random.Random(3)

    def path() -> str:
        if options.path != "deep":
            return str(options.path)
        return f"/api/v1/runs?limit=50&cursor={cursor_at(rng.randint(40_000, 60_000))}"

    whole = warm_then_time(call, path, options.requests, 100, _spent)
    print(f"{'the whole request':40} {whole / options.requests / 1000:8.1f} µs")
    for _, _, label in pieces:
        print(f"{label:40} {_spent.get(label, 0) / options.requests / 1000:8.1f} µs")


if __name__ == "__main__":
    main()

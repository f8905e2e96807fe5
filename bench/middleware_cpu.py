"""Where an authenticated read's fixed CPU goes: each middleware's own share, Django's
handler around them, DRF's dispatch around the view, and the view (issue 42, ADR 0135).

Loads the shipped WSGI application as config/wsgi.py serves it (production settings, as
bench.common.bench_env gives the server; ``core.heap.FreeingWSGIHandler``) in this
process, then wraps the ``get_response`` each middleware calls with a timer of the calling
thread's CPU, so each layer's time is what it took beyond the layers inside it (its own
``process_request``/``process_response``, and Django's exception wrapper around the next
one). The view's dispatch is split the same way: DRF's ``initial`` (authentication,
permissions, throttles, content negotiation), the handler (``retrieve``/``list``), and the
rest of dispatch (the response's finalize). Rendering and ``close()`` (Django's request
signals) are counted apart. The timers add about a microsecond per layer.

Paths: ``404`` (an authenticated GET of a dataset that does not exist), ``detail`` (a
random dataset of the store), ``deep`` (the run list at a random deep cursor), or a path.

Usage: .venv/bin/python bench/middleware_cpu.py --database URL [--requests 2000]
       [--path 404|detail|deep|/api/v1/...] [--datasets 480]
"""

import argparse
import itertools
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bare_reads import load
from bench.common import bench_env, new_token
from bench.read import cursor_at
from bench.read_request_cpu import environ, tallied, warm_then_time

_spent: dict[str, int] = {}


def _timed(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    return tallied(function, label, _spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--path", default="404")
    parser.add_argument("--datasets", type=int, default=480, help="the store's datasets")
    options = parser.parse_args()
    env = bench_env(options.database)
    env["LOG_LEVEL"] = "ERROR"  # a 404's "Not Found" warning is not the read's cost
    token = new_token(env, "read", "middleware-cpu")
    os.environ.update(env)
    from django.template.response import SimpleTemplateResponse
    from rest_framework import views

    import config.wsgi

    handler = config.wsgi.django_application
    # Requests go to what the server serves (config.wsgi.application): a read the front path
    # serves (config/read_front.py, ADR 0144) never reaches the layers timed below, so their
    # rows are zero and the whole request's first row holds the front path's own CPU.
    application = config.wsgi.application
    # The chain: each middleware instance calls ``get_response`` (the next one, wrapped in
    # Django's exception handling); the innermost calls the handler's ``_get_response``.
    names = ["handler"]
    layer = handler._middleware_chain
    instances = []
    while True:
        instance = layer.__closure__[0].cell_contents if layer.__closure__ else None
        if instance is None or not hasattr(instance, "get_response"):
            break
        instances.append(instance)
        layer = instance.get_response
    for instance in instances:
        label = f"after {type(instance).__name__}"
        names.append(label)
        instance.get_response = _timed(instance.get_response, label)
    handler.get_response = _timed(handler.get_response, "handler")
    for owner, name, label in [
        (views.APIView, "dispatch", "dispatch"),
        (views.APIView, "initial", "initial"),
        (views.APIView, "finalize_response", "finalize"),
        (SimpleTemplateResponse, "render", "render"),
    ]:
        setattr(owner, name, _timed(getattr(owner, name), label))

    rng = random.Random(5)

    def path() -> str:
        if options.path == "404":
            return "/api/v1/datasets/999999999"
        if options.path == "detail":
            return f"/api/v1/datasets/{rng.randint(1, options.datasets)}"
        if options.path == "deep":
            return f"/api/v1/runs?limit=50&cursor={cursor_at(rng.randint(40_000, 60_000))}"
        return str(options.path)

    def call(each: str) -> None:
        status: list[str] = []
        body = application(environ(each, token), lambda s, h: status.append(s))
        b"".join(body)
        started = time.thread_time_ns()
        if hasattr(body, "close"):  # Django's answer; the front path's is a list
            body.close()
        _spent["close"] = _spent.get("close", 0) + time.thread_time_ns() - started
        if status[0][:3] not in ("200", "404"):
            raise SystemExit(f"{each}: {status[0]}")

    whole = warm_then_time(call, path, options.requests, 200, _spent)
    n = options.requests

    def us(label: str) -> float:
        return _spent.get(label, 0) / n / 1000

    dispatch, own_view = us("dispatch"), us("dispatch") - us("initial") - us("finalize")
    rows = [
        ("the whole request (WSGI call, body, close)", whole / n / 1000),
        (
            "  WSGI handler before/after the middleware",
            whole / n / 1000 - us("handler") - us("close"),
        ),
    ]
    for outer, inner in itertools.pairwise(names):
        rows.append((f"  {inner.removeprefix('after ')} (own)", us(outer) - us(inner)))
    rows += [
        ("  handler: resolve, view middleware, render", us(names[-1]) - dispatch),
        ("    of which rendering", us("render")),
        ("  DRF initial (auth, perms, throttles, conneg)", us("initial")),
        ("  DRF finalize_response", us("finalize")),
        ("  the rest of dispatch (the view itself)", own_view),
        ("  close() (request signals, freeing)", us("close")),
    ]
    print(f"{options.path}: {n} requests, load {load()}")
    for label, value in rows:
        print(f"{label:48} {value:8.1f} µs")


if __name__ == "__main__":
    main()

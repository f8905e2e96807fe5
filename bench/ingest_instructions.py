"""Instructions per single-event ingest request, counted by valgrind (callgrind).

Why: CPU time on a shared 2-core machine drifts by up to 2x within minutes. The same code
gave 1,134-1,838 µs of server CPU per event in six runs of bench.ingest within two minutes.
An instruction count does not move with the machine's load: the same code counted three
times gave totals within 1.2 % of each other. So this is the figure to compare code changes
with. The throughput ratio that issue 14 asks for is printed by bench.ingest.

Calls the WSGI applications in process with ``POST /api/v1/lineage`` environs built in
memory, as bench.profile_ingest does. Each application runs in a child process under
``valgrind --tool=callgrind``, with counting switched on (``callgrind_control``) only
around the measured requests, after a warm-up. The two applications are:
- ``shipped``: config.wsgi's application, the fast path in front of Django;
- ``django``: Django's full request cycle for the same requests, as a baseline measured in
  the same run.

Each figure covers the application's own process: Python, psycopg and the derivation
publisher thread. PostgreSQL's work is not in it.

Usage: .venv/bin/python -m bench.ingest_instructions [--requests 300]
It migrates a scratch database (lineage_bench_instructions) first. Needs valgrind.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

from bench.common import (
    DEFAULT_CORPUS,
    ROOT,
    call_wsgi,
    load_templates,
    make_events,
    migrated_database,
    new_token,
    require_stored,
    wsgi_environ,
)

APPLICATIONS = {
    "shipped": "config.wsgi: the fast path in front of Django",
    "django": "Django's full request cycle",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/lineage_bench_instructions",
    )
    parser.add_argument("--child", choices=list(APPLICATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")

    env = migrated_database(args.database_url)
    env["BENCH_TOKEN"] = new_token(env, "ingest")
    print(f"{args.requests} single-event requests per application, counted by callgrind")
    counts = {}
    for name, description in APPLICATIONS.items():
        counts[name] = count_instructions(name, args.requests, env)
        print(f"{name:8} {counts[name]:>12,.0f} instructions per request  ({description})")
    print(f"ratio shipped/django: {counts['shipped'] / counts['django']:.2f}")


def count_instructions(application: str, requests: int, env: dict[str, str]) -> float:
    """Instructions per request of ``application``, from a child run under callgrind."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench.ingest_instructions",
        "--child",
        application,
        "--requests",
        str(requests),
    ]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode or found is None:
        raise SystemExit(f"the {application} run failed:\n{result.stdout}{result.stderr[-3000:]}")
    return int(found.group(1)) / requests


def child(application: str, requests: int) -> None:
    """Warm ``application`` up, then count instructions for ``requests`` new events."""
    import config.wsgi

    app = config.wsgi.application if application == "shipped" else config.wsgi.django_application
    token = os.environ["BENCH_TOKEN"]
    templates = load_templates(DEFAULT_CORPUS)
    seed = time.time_ns()  # new events in every run: a repeat is answered 200, more cheaply
    warmup = [wsgi_environ(body, token) for body in make_events(templates, 100, seed=seed)]
    measured = [wsgi_environ(body, token) for body in make_events(templates, requests, seed + 1)]
    call_wsgi(app, warmup)
    toggle = ["callgrind_control", "--instr"]
    subprocess.run([*toggle, "on", str(os.getpid())], check=True, capture_output=True)
    statuses = call_wsgi(app, measured)
    subprocess.run([*toggle, "off", str(os.getpid())], check=True, capture_output=True)
    require_stored(statuses)


if __name__ == "__main__":
    main()

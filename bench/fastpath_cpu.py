"""CPU per single-event ingest request, in-process: the fast path against Django's full
request cycle, with the same view answering both (ADR 0007).

Builds WSGI requests for new events and calls each application directly (no network, no
client threads), so the figure is the server's CPU plus building the request, measured
with process_time. Uses DATABASE_URL (migrated first) and REDIS_URL as they are.

Usage: .venv/bin/python bench/fastpath_cpu.py [--requests 1500] [--rounds 2]
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application
    from django.test import RequestFactory

    from bench.common import DEFAULT_CORPUS, load_templates, make_events
    from ingest.fastpath import IngestFastPath
    from ingest.services import create_token

    call_command("migrate", verbosity=0)
    secret = create_token("bench fastpath", "ingest")[1]
    django_app = get_wsgi_application()
    applications = {"fast path": IngestFastPath(django_app), "django": django_app}
    templates = load_templates(DEFAULT_CORPUS)
    factory = RequestFactory()

    def environs(count: int) -> list[dict]:
        return [
            factory.post(
                "/api/v1/lineage",
                data=body,
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {secret}",
            ).environ
            for body in make_events(templates, count, seed=int.from_bytes(os.urandom(4)))
        ]

    def call(application, environ: dict) -> None:
        status: list[str] = []
        body = b"".join(application(environ, lambda line, headers: status.append(line)))
        if not status[0].startswith("201"):
            raise SystemExit(f"unexpected answer {status[0]}: {body[:200]!r}")

    for round_number in range(1, options.rounds + 1):
        for name, application in applications.items():
            for environ in environs(50):
                call(application, environ)  # warm up: token cached, connection open
            batch = environs(options.requests)
            started = time.process_time()
            for environ in batch:
                call(application, environ)
            per_request = (time.process_time() - started) / options.requests * 1000
            print(f"round {round_number} {name:9} {per_request:.3f} ms CPU per request")


if __name__ == "__main__":
    main()

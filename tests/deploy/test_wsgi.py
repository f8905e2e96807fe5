"""The WSGI entry point leaves what start-up built out of the garbage collector's reach, and
opens its connections with the statement timeout that the worker's and commands' lack."""

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from config.settings.base import DEFAULT_DATABASE_URL
from tests.fresh_python import printed

ROOT = Path(__file__).resolve().parents[2]


def test_the_entry_point_freezes_what_start_up_built() -> None:
    # A fresh interpreter: in this one, whatever imported config.wsgi first decides.
    code = (
        "import gc\n"
        "before = gc.get_freeze_count()\n"
        "from config.wsgi import application\n"
        "print(before, gc.get_freeze_count())\n"
    )
    before, after = map(int, printed(code).split())
    assert before == 0
    assert after > 50_000  # Django, DRF and our modules: not a handful of objects


def test_only_the_web_entry_point_opens_connections_with_the_statement_timeout() -> None:
    """Issue 38 item 5. The web process (config/wsgi.py, what config.server serves) under
    LINEAGE_READ_STATEMENT_TIMEOUT_MS; the Celery worker (config.celery) and management
    commands (manage.py: neither imports config.wsgi) without it, so derivation and backfill
    are not cut. Each in a fresh interpreter, both at once."""
    show = (
        "from django.db import connection\n"
        "with connection.cursor() as cursor:\n"
        "    cursor.execute('SHOW statement_timeout')\n"
        "    print(cursor.fetchone()[0])\n"
    )
    # Any database answers SHOW: the server's maintenance one, whatever the suite created.
    given = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)  # unset under `make test`
    url = urlunsplit(urlsplit(given)._replace(path="/postgres"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": url,
        "LINEAGE_READ_STATEMENT_TIMEOUT_MS": "1234",
    }
    starts = {
        "web": "import config.wsgi\n",
        "worker": "import django, config.celery\ndjango.setup()\n",
    }
    processes = {
        role: subprocess.Popen(
            [sys.executable, "-c", start + show],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for role, start in starts.items()
    }
    shown = {
        role: process.communicate(timeout=120)[0].strip() for role, process in processes.items()
    }
    assert shown == {"web": "1234ms", "worker": "0"}


def test_a_workers_first_publish_and_request_import_nothing_new() -> None:
    """ADR 0096: what a worker's first publish and first request through Django's handler
    imported, each worker on its own and holding the GIL mid-request, is imported by the
    entry point, before the server forks. The broker is unreachable: the publish fails, but
    only after it has loaded all it needs to send."""
    code = (
        "import sys\n"
        "from config.wsgi import application\n"
        "from celery import current_app\n"
        "from django.conf import settings\n"
        "from django.utils.module_loading import import_string\n"
        "before = set(sys.modules)\n"
        "try:\n"
        "    current_app.send_task('catalog.derive_events', args=[[1]], retry=False)\n"
        "except Exception as error:\n"
        "    print('publish failed:', type(error).__name__)\n"
        "import_string(settings.MESSAGE_STORAGE)\n"
        "print(sorted(name for name in set(sys.modules) - before "
        "if name.split('.')[0] in ('celery', 'kombu', 'django', 'redis')))\n"
    )
    nowhere = "redis://127.0.0.1:9/15"  # xdist workers count down from 15
    lines = printed(code, REDIS_URL=nowhere, CELERY_BROKER_URL=nowhere).strip().splitlines()
    assert lines[0].startswith("publish failed:")  # it reached the broker
    assert lines[-1] == "[]"

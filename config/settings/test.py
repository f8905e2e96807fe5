"""Settings for the test suite: real PostgreSQL and Redis, fast password hashing."""

import os
from urllib.parse import urlsplit, urlunsplit

from django.core.exceptions import ImproperlyConfigured

from config.env import env_str
from config.settings.base import *  # noqa: F403
from config.settings.base import LINEAGE


def worker_redis_url(url: str, worker: str | None) -> str:
    """``url`` with the Redis database of pytest-xdist's ``worker`` (gw0, gw1, ...): gw0
    keeps ``url``'s database, each next worker takes the one below it (db 15, 14, ...), so
    one worker's queued tasks and waiting-task marker are never another's (ADR 0075).
    pytest-django gives each worker its own PostgreSQL test database the same way. Outside
    xdist (no worker, or its controller "master") ``url`` is used as it is."""
    if not worker or not worker.startswith("gw"):
        return url
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    database = base - int(worker.removeprefix("gw"))
    if database < 0:
        raise ImproperlyConfigured(
            f"pytest-xdist worker {worker} has no Redis database below db {base} of "
            f"REDIS_URL={url}: use fewer workers (-n) or a higher database in REDIS_URL."
        )
    return urlunsplit(parts._replace(path=f"/{database}"))


SECRET_KEY = "test-only-secret-key"
DEBUG = False
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# A server process a test starts inherits PYTEST_XDIST_WORKER, so it lands on the same db.
REDIS_URL = worker_redis_url(
    env_str("REDIS_URL", "redis://127.0.0.1:6379/15"), os.environ.get("PYTEST_XDIST_WORKER")
)
CELERY_BROKER_URL = REDIS_URL
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LINEAGE = {**LINEAGE, "ENQUEUE_BACKOFF_SECONDS": 0}

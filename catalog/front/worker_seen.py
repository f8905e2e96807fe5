"""When a Celery worker last ran a catalog task, for the front page's "worker last seen".

Every derive and sweep task stamps the time in Redis (the broker the worker already talks
to); the scheduler runs a sweep every few seconds, so an idle but healthy worker is still
seen. The stamp expires after a day: a worker gone for longer is "never seen". Redis
being unreachable is never an error here: the page says "unknown".
"""

import contextlib
from datetime import UTC, datetime

import redis
from django.conf import settings

KEY = "lineage:worker:last-seen"
TTL_SECONDS = 24 * 3600

_client: "tuple[str, redis.Redis] | None" = None


def _redis() -> redis.Redis:
    global _client
    url = settings.CELERY_BROKER_URL
    if _client is None or _client[0] != url:
        _client = (url, redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5))
    return _client[1]


def record(now: datetime | None = None) -> None:
    """Called by each catalog task as it starts."""
    moment = (now or datetime.now(UTC)).timestamp()
    # The task's own work matters more than the stamp: Redis trouble is not the task's.
    with contextlib.suppress(redis.RedisError):
        _redis().set(KEY, f"{moment:.3f}", ex=TTL_SECONDS)


class Unknown:
    """Redis could not be asked."""


UNKNOWN = Unknown()


def last_seen() -> datetime | Unknown | None:
    """The last stamp; None when no worker ran a task in the last day."""
    try:
        value = _redis().get(KEY)
    except redis.RedisError:
        return UNKNOWN
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), UTC)

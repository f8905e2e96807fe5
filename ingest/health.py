"""Liveness and readiness endpoints for probes and operators."""

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse

_migrations_done = False


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and serving requests. Touches nothing else."""
    return JsonResponse({"status": "ok"})


def _migrations_applied() -> bool:
    global _migrations_done
    if not _migrations_done:
        executor = MigrationExecutor(connection)
        _migrations_done = not executor.migration_plan(executor.loader.graph.leaf_nodes())
    return _migrations_done


def _broker_state() -> str:
    try:
        client = redis.Redis.from_url(
            settings.CELERY_BROKER_URL, socket_connect_timeout=0.5, socket_timeout=0.5
        )
    except ValueError:
        # Another kombu transport (amqp://, sentinel://; ingest.enqueue publishes to them
        # without the Redis marker) or a URL redis-py cannot read: reported, as the broker
        # only is. It was a 500, and the pod never became ready. The URL is not repeated:
        # it may hold a password.
        return "not checked: not a URL redis-py reads"
    try:
        client.ping()
        return "ok"
    except redis.RedisError as error:
        return f"unavailable: {type(error).__name__}"


def readyz(request: HttpRequest) -> JsonResponse:
    """Ready when PostgreSQL answers and migrations are applied; the broker is only reported."""
    checks: dict[str, str] = {}
    ready = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
        if _migrations_applied():
            checks["migrations"] = "ok"
        else:
            checks["migrations"] = "pending"
            ready = False
    except DatabaseError as error:
        checks["database"] = f"unavailable: {type(error).__name__}"
        ready = False
    checks["broker"] = _broker_state()
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503
    )

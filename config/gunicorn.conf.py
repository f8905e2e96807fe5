"""Gunicorn settings for the web pods, read from the environment (defaults fit 2 cores).

Two worker processes (one per core) with eight threads each: a request spends much of its
time waiting on PostgreSQL, so threads keep both cores busy without a process per request.
bench/layouts.py measured 2 x 8 best of the layouts tried on 2 cores (docs/benchmarks.md);
each thread holds one database connection, so a pod opens up to 16.
Prometheus metrics from all workers are merged through ``PROMETHEUS_MULTIPROC_DIR`` (see
docs/adr/0011-metrics.md): the directory is emptied when the server starts and a dead
worker's live gauges are dropped when it exits.
"""

import os
import shutil
from pathlib import Path


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


bind = f"0.0.0.0:{_int('PORT', 8000)}"
workers = _int("GUNICORN_WORKERS", 2)
threads = _int("GUNICORN_THREADS", 8)
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
# A request slower than this is killed; ingest of the largest batch stays far below it.
timeout = _int("GUNICORN_TIMEOUT", 60)
# Kubernetes sends SIGTERM, then SIGKILL after terminationGracePeriodSeconds (default 30 s).
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 25)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Recycle workers now and then so a slow leak never becomes an outage.
max_requests = _int("GUNICORN_MAX_REQUESTS", 2000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 200)
# The heartbeat file must live on a writable disk: the root filesystem is read-only.
worker_tmp_dir = os.environ.get("GUNICORN_WORKER_TMP_DIR", "/tmp")
# Access log to stdout, one line per request; GUNICORN_ACCESS_LOG="" turns it off (it costs
# CPU on every request, docs/benchmarks.md), a path writes it there.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-") or None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
access_log_format = (
    '{"remote":"%(h)s","method":"%(m)s","path":"%(U)s","status":%(s)s,'
    '"bytes":"%(B)s","duration_ms":%(M)s,"user_agent":"%(a)s"}'
)
proc_name = "lineage-catalog-web"
# Settings are imported in the master so a configuration error stops start-up at once.
preload_app = os.environ.get("GUNICORN_PRELOAD", "true").lower() in {"1", "true", "yes", "on"}


def on_starting(server: object) -> None:
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        # Files left by an earlier server would be counted again: start empty.
        shutil.rmtree(directory, ignore_errors=True)
        Path(directory).mkdir(parents=True, exist_ok=True)


def child_exit(server: object, worker: object) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]

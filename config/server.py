"""The web server: granian serving config.wsgi (``python -m config.server``), what the image,
the chart, ``make run``, the benchmarks and the end-to-end tests run. See
docs/adr/0052-granian-web-server.md for why granian and not gunicorn.

Read from the environment; the defaults fit 2 cores:

- ``HOST`` (0.0.0.0) and ``PORT`` (8000): where to listen. A port another program holds
  ends the server with one line naming it (exit status 78).
- ``WEB_WORKERS`` (2): processes, one per core. ``WEB_THREADS`` (8, 2-1,024): threads per
  process that run the Django application; a request spends much of its time waiting on PostgreSQL,
  so threads keep a core busy. Each thread holds one database connection: a pod opens up to
  workers x threads. At most threads - 1 of them wait on request bodies at once, and one
  token (or none) one fewer (config/wsgi.py, core/body_reads.py, ADR 0197).
- ``WEB_MAX_RSS_MIB`` (400): a worker whose memory grows past this is replaced (a new one
  starts first, then the old one finishes its requests), so a slow leak never becomes an
  outage. ``WEB_RSS_SAMPLE_SECONDS`` (30, 1-300, granian's bounds): how often granian
  samples the workers' memory for it (the first sample this long after the start).
  ``WEB_LIFETIME_SECONDS`` (0: never) replaces workers by age as well.
- ``WEB_GRACEFUL_SECONDS`` (25): on SIGTERM the workers stop accepting, finish their
  requests, and are killed after this long (Kubernetes kills the pod after
  terminationGracePeriodSeconds, 30 by default).
- ``WEB_ACCESS_LOG`` (false): one JSON line per request on stdout (``AccessFormatter``);
  off by default, as it costs CPU on every request (ADR 0052) and the ingress and the
  request histogram already account for requests.
- ``WEB_RELOAD`` (false): restart on code changes (``make run`` only).
- ``WEB_HEADER_READ_SECONDS`` (2, 1-60): a connection whose request head has not arrived
  whole this long after the server began waiting for it is closed (granian's HTTP/1 header
  read timeout, 30 s by default); the same timer closes a kept-alive connection idle this
  long. Each connection takes one of granian's places (backlog 1024 / workers, per worker)
  whatever it sends, so a peer holding about 1,024 half-sent heads kept the kubelet's
  probes waiting past their 3 s for the whole 30 s (ADR 0192). A head is one packet from
  the ingress controller, a producer or the kubelet.

The settings and the application are imported here, before the workers start: a
configuration error stops start-up at once, and the forked workers share the pages start-up
built instead of each importing Django again (config/wsgi.py freezes them). The secrets the
settings read are then removed from the environment (``forget_secrets``).
"""

import ctypes
import logging
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_str, web_threads

ROOT = Path(__file__).resolve().parent.parent
# Watched by WEB_RELOAD: the service's code, not .local (make run's data) or the virtualenv.
CODE = [ROOT / name for name in ("config", "core", "ingest", "catalog", "api")]
# What the access log records of a request, read from granian's access-log record.
ACCESS_FIELDS = {
    "remote": "addr",
    "method": "method",
    "path": "path",
    "status": "status",
    "duration_ms": "dt_ms",
}


class AccessFormatter(logging.Formatter):
    """granian's access record as one JSON object per line, like the service's other logs.

    JSON is written by orjson, not by a format string, so a path or a User-Agent holding a
    quote or a newline cannot break the line or forge another one.
    """

    def format(self, record: logging.LogRecord) -> str:
        fields = record.args if isinstance(record.args, dict) else {}
        line: dict[str, Any] = {name: fields.get(key) for name, key in ACCESS_FIELDS.items()}
        if isinstance(line["duration_ms"], float):
            line["duration_ms"] = round(line["duration_ms"], 1)
        line["user_agent"] = fields.get("_h0")
        return orjson.dumps(line).decode()


def logging_config() -> dict[str, Any]:
    """granian's own logs through the service's JSON formatter (ADR 0012); access lines as
    ``AccessFormatter`` writes them."""
    service: dict[str, Any] = settings.LOGGING
    formatter = service["handlers"]["console"]["formatter"]
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "service": service["formatters"][formatter],
            "access": {"()": "config.server.AccessFormatter"},
        },
        # Redacted like every other log line (core/log_redaction.py): a path's query may
        # carry a token.
        "filters": {"redact": {"()": "core.log_redaction.RedactingFilter"}},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "service",
                "filters": ["redact"],
            },
            "access": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stdout",
                "formatter": "access",
                "filters": ["redact"],
            },
        },
        "loggers": {
            "_granian": {"handlers": ["console"], "level": "INFO", "propagate": False},
            "granian.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
        },
    }


def empty_metrics_directory() -> None:
    """Counter and histogram files left by an earlier server would be counted again: start
    empty (docs/adr/0011-metrics.md). The service keeps no live gauges in these files, so a
    worker that exits leaves nothing to clean up."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
        Path(directory).mkdir(parents=True, exist_ok=True)


# sysexits.h's EX_CONFIG: this configuration cannot start (a taken port), so a supervisor
# (scripts/run_local.py) does not start it again.
CANNOT_START = 78

# Read once by the settings at import; dropped from the environment afterwards, because
# granian copies the environment into every request's WSGI environ (request.META).
SECRETS = (
    "DJANGO_SECRET_KEY",
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "LINEAGE_INITIAL_INGEST_TOKEN",
    "LINEAGE_INITIAL_READ_TOKEN",
)


def forget_secrets() -> None:
    """Remove the settings' secrets from the environment once the settings hold them, so
    no request's environ carries them (and a smaller environ is cheaper to copy)."""
    settings.SECRET_KEY  # noqa: B018  (the settings are loaded, not lazily pending)
    for name in SECRETS:
        os.environ.pop(name, None)
        os.environ.pop(f"{name}_FILE", None)


def options() -> dict[str, Any]:
    """granian's options, from the environment (the module docstring lists the names)."""
    # granian (about 60 ms of imports) only where the server starts: tests import this
    # module for its helpers (AccessFormatter, die_with_the_main_process).
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.log import LogLevels

    lifetime = env_int("WEB_LIFETIME_SECONDS", 0)
    reload = env_bool("WEB_RELOAD", False)
    return {
        "target": "config.wsgi:application",
        "address": env_str("HOST", "0.0.0.0"),
        "port": env_int("PORT", 8000),
        "interface": Interfaces.WSGI,
        "http": HTTPModes.http1,
        # Below the liveness probe's 3 s timeout, so a probe queued behind held places is
        # answered before it gives up (ADR 0192).
        "http1_settings": HTTP1Settings(header_read_timeout=header_read_seconds() * 1000),
        "websockets": False,
        "workers": env_int("WEB_WORKERS", 2),
        "blocking_threads": web_threads(),
        "log_level": LogLevels(env_str("LOG_LEVEL", "INFO").lower()),
        "log_dictconfig": logging_config(),
        "log_access": env_bool("WEB_ACCESS_LOG", False),
        # The User-Agent is the one header the access line keeps (AccessFormatter).
        "log_access_format": "%(header{user-agent})s",
        # A worker that dies is replaced; one that dies again within seconds stops the
        # server (granian's crash-loop guard), so the pod restarts and the failure shows.
        "respawn_failed_workers": not reload,
        "workers_lifetime": max(lifetime, 60) if lifetime else None,
        # granian's memory monitor does not run beside the reloader (make run).
        "workers_max_rss": None if reload else env_int("WEB_MAX_RSS_MIB", 400) or None,
        "rss_sample_interval": env_int("WEB_RSS_SAMPLE_SECONDS", 30, minimum=1, maximum=300),
        "workers_kill_timeout": env_int("WEB_GRACEFUL_SECONDS", 25),
        "reload": reload,
        "reload_paths": CODE if reload else None,
    }


def header_read_seconds() -> int:
    """``WEB_HEADER_READ_SECONDS``, within what granian takes (1 ms to 60 s)."""
    return env_int("WEB_HEADER_READ_SECONDS", 2, minimum=1, maximum=60)


def die_with_the_main_process() -> None:
    """In each forked worker: ask Linux to SIGKILL it when the main process ends.

    granian's workers do not watch their parent, so a main process that was SIGKILLed left
    its workers serving the port and holding database connections (a container takes them
    down with it; ``make run``, the tests and a host without one did not).

    The signal is SIGKILL, not SIGTERM (issue 29 item 7): a worker runs the main process's
    SIGTERM handler, inherited with the fork, until it installs its own, and granian's
    handler only sets a flag in the main process's server object, which in a worker nobody
    reads; its own handler in turn only sets an event its server may not watch yet. A main
    process that died in that window (long under load) left a worker alive 12 minutes later,
    reparented to PID 1 and still listening. A worker whose main process is gone has nobody
    to replace it or to stop it gracefully; its clients see the connection close and retry
    (ingest is idempotent). A graceful stop is unchanged: the main process stops its workers
    before it exits, so the signal only ever reaches a worker whose main process died.

    A main process that died before the request (between the fork and the call) is seen by
    the parent id having changed; the worker then exits at once."""
    forking: list[int] = [0]  # the pid of the process that forks, set just before

    def before() -> None:
        forking[0] = os.getpid()

    def in_child() -> None:
        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL) != 0:
            os._exit(70)  # no way to end with the main process: do not serve at all
        if os.getppid() != forking[0]:  # the parent ended before the call above
            os._exit(0)

    if sys.platform == "linux":
        os.register_at_fork(before=before, after_in_child=in_child)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
    empty_metrics_directory()
    die_with_the_main_process()
    try:
        if not env_bool("WEB_RELOAD", False):
            import config.wsgi  # noqa: F401  (see the module docstring)

            forget_secrets()
        served = options()
    except ImproperlyConfigured as error:
        sys.exit(f"config.server: {error}")  # a readable line, not a traceback
    from granian import Granian  # only here: see options()

    try:
        Granian(**served).serve()
    except (OSError, RuntimeError) as error:
        # granian reports a taken port as RuntimeError("Address already in use (os error
        # 98)") with a page of Rust backtrace; one line says which port and what moves it.
        if "Address already in use" not in str(error):
            raise
        print(
            f"config.server: port {served['port']} on {served['address']} is in use by "
            "another program: set PORT to a free port",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(CANNOT_START)


if __name__ == "__main__":
    main()

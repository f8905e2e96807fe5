"""Settings shared by every environment. Values come from the environment (see config/env.py)."""

from pathlib import Path
from typing import Any, TypedDict

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config.env import env_bool, env_float, env_int, env_list, env_prefixed, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # swagger-ui's files, served from STATIC_URL
    "ingest",
    "catalog",
    "api",
    # Last: catalog's templates override the admin's own (admin/base_site.html adds the icon).
    "django.contrib.admin",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "ingest.middleware.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # The admin's page helpers hide what is retired from a user who does not see it.
    "catalog.admin.visibility.AdminViewerMiddleware",
    # Django's messages, for pages only: not for the API's paths (core/pages.py).
    "core.pages.PageMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Serves the Marquez mount at plain /api/v1/ on MARQUEZ_API["HOSTS"] (docs/marquez.md).
    "api.marquez.hosts.MarquezHostsMiddleware",
    # A NUL in an admin address: a readable 400 page, not a database error (issue 27).
    "catalog.admin.query_guard.AdminQueryGuardMiddleware",
    # A query cut by the web process's statement timeout: a readable 503 page in the admin.
    "catalog.admin.statement_timeout.AdminStatementTimeoutMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lineage_catalog"
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", DEFAULT_DATABASE_URL),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # No ping before every request (a round trip on the ingest hot path). A connection
        # PostgreSQL closed is replaced before use (ADR 0146); one cut silently is answered
        # with a 503 (clients retry) and replaced on the next request.
        conn_health_checks=env_bool("DATABASE_CONN_HEALTH_CHECKS", False),
    )
}
# Django's PostgreSQL backend, with kept connections that PostgreSQL closed (a restart, a
# terminated backend) replaced before a request uses them (ADR 0146).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "core.postgresql"
DATABASES["default"].setdefault("OPTIONS", {})
# A request that cannot reach PostgreSQL must fail fast with a 503, not hang a worker.
DATABASES["default"]["OPTIONS"].setdefault(
    "connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5)
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# --- Celery (broker: Redis) ---------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
CELERY_RESULT_BACKEND = None  # tasks report through the database, never through results
CELERY_TASK_IGNORE_RESULT = True
# Messages are acknowledged on receipt. Derivation needs no redelivery: a worker killed
# mid-task leaves its events pending in PostgreSQL and the sweep derives them. Late acks
# also crashed the worker (kombu 5.7 + redis-py 8) when a task finished while Redis was
# down: the ack ran on a closed connection (tests/faults found it).
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Publishing happens on the ingest request path: when Redis is down it must fail in well
# under a second instead of retrying; the periodic sweep derives whatever was not enqueued.
CELERY_TASK_PUBLISH_RETRY = False
CELERY_BROKER_CONNECTION_TIMEOUT = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": 0.5,
    "socket_timeout": 2,
    "max_retries": 0,
}
CELERY_TASK_DEFAULT_QUEUE = "lineage"
# Webhook deliveries (and their sweep) have a queue of their own: a derive task may hold a
# worker process for its whole time budget, and a delivery queued behind it would wait as
# long. A worker started without -Q consumes both queues (make run, the tests); the chart
# runs one worker on each (-Q lineage, -Q webhooks; docs/notifications.md, ADR 0086).
CELERY_TASK_QUEUES = (Queue("lineage"), Queue("webhooks"))
CELERY_TASK_ROUTES = {
    "catalog.deliver_webhooks": {"queue": "webhooks"},
    "catalog.deliver_webhook": {"queue": "webhooks"},
    "catalog.sweep_webhooks": {"queue": "webhooks"},
}
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    # Derive events still pending after a few seconds (broker down, lost message, killed
    # worker). Overlapping sweeps are harmless: events are claimed with SKIP LOCKED.
    "catalog-sweep-underived": {
        "task": "catalog.sweep_underived",
        "schedule": 5.0,
        "kwargs": {"older_than_seconds": 5.0},
        "options": {"expires": 5.0},
    },
}

# --- REST framework and OpenAPI -----------------------------------------------------------
REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["core.rendering.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    # An unknown ?format= is a 400 problem, not DRF's 404 (core/negotiation.py).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.negotiation.ProblemContentNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "EXCEPTION_HANDLER": "core.problems.problem_exception_handler",
    "UNAUTHENTICATED_USER": None,
    # Proxies in front of the service that append to X-Forwarded-For (an ingress: 1). The
    # throttle of anonymous reads counts per client address: with 0 it is REMOTE_ADDR and
    # X-Forwarded-For is ignored, since any client can write that header (docs/deploy.md).
    "NUM_PROXIES": env_int("DJANGO_NUM_PROXIES", 0),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Lineage Catalog API",
    "DESCRIPTION": (
        "Collects OpenLineage events and simple lineage edges, keeps every event it was "
        "sent, and serves the derived catalog. Errors are RFC 9457 problem documents."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    # /api/docs/ loads swagger-ui from our own static files: no CDN, nothing unpinned, and
    # no third-party script on the admin's origin (the docs share it).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several responses have a "status" field with different choices: name each set.
    "ENUM_NAME_OVERRIDES": {
        "StoredStatusEnum": ["created", "duplicate"],
        "BatchStatusEnum": ["success", "partial_success"],
        # Events and event details both carry `kind`; the graph's edges have another.
        "EventKindEnum": "ingest.models.EventKind",
        # The impact report's items carry `type` too, as the graph's nodes do.
        "ImpactItemTypeEnum": ["dataset", "column", "job"],
        "TypeEnum": ["dataset", "job"],
    },
}

# --- Ingest limits and behaviour ----------------------------------------------------------
# The write endpoints, which an HTTPS redirect (SECURE_SSL_REDIRECT, production) never
# answers (ADR 0164): a producer does not re-send a POST to a 301's Location (or re-sends
# it as a GET), and its token has crossed the plain connection already, so the redirect
# protected nothing and lost the event. In-cluster producers post to the Service over HTTP.
INGEST_PATHS_NOT_REDIRECTED = [
    r"^api/v1/lineage$",
    r"^api/v1/lineage/batch$",
    r"^api/v1/lineage/edges$",
    r"^api/v1/metadata$",  # its GET, the read API's list, is not redirected either
]


class LineageSettings(TypedDict):
    """The shape of ``LINEAGE``, so ``settings.LINEAGE["..."]`` is typed where it is read."""

    MAX_REQUEST_BYTES: int
    MAX_DECOMPRESSED_BYTES: int
    MAX_EVENT_BYTES: int
    MAX_JSON_DEPTH: int
    MAX_JSON_VALUES: int
    MAX_BATCH_EVENTS: int
    ALLOW_ANONYMOUS_INGEST: bool
    DERIVE_TASK: str
    REDACT_KEYS: list[str]
    REDACT_WORDS: list[str]
    MAX_PAGE_BYTES: int
    ENQUEUE_BACKOFF_SECONDS: int
    ENQUEUE_INTERVAL_MS: int
    MAX_RUN_EDGES: int
    MAX_COLUMN_EDGES: int
    RETENTION_DAYS: int
    READ_STATEMENT_TIMEOUT_MS: int
    EXPERIMENTAL_LINEAGE_FACET: bool
    PREPARE_INGEST_INSERT: bool
    PREPARE_READS: bool


LINEAGE: LineageSettings = {
    # Largest request body accepted on the wire (bytes, after any gzip).
    "MAX_REQUEST_BYTES": env_int("LINEAGE_MAX_REQUEST_BYTES", 16 * 1024 * 1024),
    # Largest body after gzip inflation; a gzip bomb stops here without being inflated further.
    "MAX_DECOMPRESSED_BYTES": env_int("LINEAGE_MAX_DECOMPRESSED_BYTES", 64 * 1024 * 1024),
    # Largest single event (serialised bytes).
    "MAX_EVENT_BYTES": env_int("LINEAGE_MAX_EVENT_BYTES", 8 * 1024 * 1024),
    # Deepest JSON nesting accepted (objects and arrays).
    "MAX_JSON_DEPTH": env_int("LINEAGE_MAX_JSON_DEPTH", 64),
    # Most JSON values one request body may hold (ADR 0166): parsed, a value costs 50-150
    # bytes of memory whatever its size, so 64 MiB of "{}," was 1.85 GiB in a web process
    # whose pod may use 1 GiB; this bounds a body's document to ~150 MB.
    "MAX_JSON_VALUES": env_int("LINEAGE_MAX_JSON_VALUES", 1_000_000),
    # Largest JSON of one list page: fewer items when they are large (``next`` stays right).
    # Also the most event bytes one export chunk holds, and the most a Marquez event page
    # may hold (a larger one is refused with the limit that fits: clients page by offset).
    "MAX_PAGE_BYTES": env_int("LINEAGE_MAX_PAGE_BYTES", 8 * 1024 * 1024),
    # Most events in one batch request, or in an array on /lineage, /edges or /metadata.
    "MAX_BATCH_EVENTS": env_int("LINEAGE_MAX_BATCH_EVENTS", 10_000),
    # Local development only: accept ingest without any token.
    "ALLOW_ANONYMOUS_INGEST": env_bool("LINEAGE_ALLOW_ANONYMOUS_INGEST", False),
    # Apply the experimental ``lineage`` facet (ADR 0094): off, it is kept as sent only.
    "EXPERIMENTAL_LINEAGE_FACET": env_bool("LINEAGE_EXPERIMENTAL_LINEAGE_FACET", False),
    # Celery task that ingest enqueues after commit (ingest knows only its name).
    "DERIVE_TASK": "catalog.derive_events",
    # Keys whose values are redacted from payloads on every read path (substring match,
    # case-insensitive); the raw log keeps them. See core/redaction.py.
    "REDACT_KEYS": env_list(
        "LINEAGE_REDACT_KEYS",
        [
            "password",
            "passwd",
            "passphrase",
            "pwd",
            "secret",
            "token",
            "apikey",
            "api_key",
            "api-key",
            "access_key",
            "accesskey",
            "private_key",
            "privatekey",
            "credential",
            "authorization",
            "sasl.jaas.config",
            "connection_string",
            "connectionstring",
        ],
    ),
    # Short secret names redacted only as whole words (``db_pass``, ``PASS``), since as
    # substrings they would hide ordinary keys (``bypass``, ``passenger_count``).
    "REDACT_WORDS": env_list("LINEAGE_REDACT_WORDS", ["pass", "pw"]),
    # After a failed publish, skip the broker for this many seconds; the sweep catches up.
    "ENQUEUE_BACKOFF_SECONDS": env_int("LINEAGE_ENQUEUE_BACKOFF_SECONDS", 5),
    # A web process publishes at most one derivation task per this many milliseconds;
    # the ids of a busy interval go in one task. A publish costs a large part of what
    # storing an event costs (docs/benchmarks.md, "Where single-event CPU goes").
    "ENQUEUE_INTERVAL_MS": env_int("LINEAGE_ENQUEUE_INTERVAL_MS", 100),
    # Most dataset → dataset lineage edges one run makes (its inputs x its outputs): the
    # rest are counted on the run (``lineage_edges_cut``); its job edges keep every dataset.
    "MAX_RUN_EDGES": env_int("LINEAGE_MAX_RUN_EDGES", 10_000),
    # Most column edges (and as many declared ones) a lineage graph with columns=true
    # serves; the answer says how many it left out (``cut.column_edges``).
    "MAX_COLUMN_EDGES": env_int("LINEAGE_MAX_COLUMN_EDGES", 2_000),
    # Days of raw events (and of runs) kept; older ones are removed daily by the scheduler,
    # their lineage kept as summaries (ADR 0079). 0 or unset: keep everything.
    "RETENTION_DAYS": env_int("LINEAGE_RETENTION_DAYS", 0),
    # The web process's statement timeout (ms, 0: none): a statement of a request on
    # /api/v1, the admin or the Marquez mount that runs longer is cancelled and answered
    # with a 503 (core/statement_timeout.py). Only the web entry points set it: workers,
    # the Kafka consumer and commands run without it.
    "READ_STATEMENT_TIMEOUT_MS": env_int("LINEAGE_READ_STATEMENT_TIMEOUT_MS", 10_000),
    # The single-event INSERT as a prepared statement on connections that are kept
    # (DATABASE_CONN_MAX_AGE > 0), ADR 0112. Turn off behind a pooler that loses prepared
    # statements between transactions (PgBouncer in transaction mode before 1.21, or with
    # max_prepared_statements = 0) when connections are kept there too.
    "PREPARE_INGEST_INSERT": env_bool("LINEAGE_PREPARE_INGEST_INSERT", True),
    # The dataset detail's fixed-text reads and an unfiltered run page's statement as
    # prepared statements on kept connections, the same way and with the same pooler
    # caveat (core/prepared.py, ADR 0119, 0130).
    "PREPARE_READS": env_bool("LINEAGE_PREPARE_READS", True),
}
if not 0 <= LINEAGE["RETENTION_DAYS"] <= 365_000:  # catalog.services.retention.MAX_DAYS
    raise ImproperlyConfigured(
        f"LINEAGE_RETENTION_DAYS={LINEAGE['RETENTION_DAYS']} must be from 1 to 365000 "
        "(unset: keep all)."
    )
if LINEAGE["RETENTION_DAYS"]:
    # Daily, at a quiet hour; batches of short transactions, so ingest and reads go on.
    CELERY_BEAT_SCHEDULE["catalog-retention"] = {
        "task": "catalog.apply_retention",
        "schedule": crontab(hour=3, minute=17),
        "options": {"expires": 3600.0},
    }
# Webhook notifications of catalog changes (catalog/notify, docs/notifications.md, ADR 0086).
WEBHOOKS: dict[str, Any] = {
    # Tries of one delivery before it is dead (a steward can replay it from the admin).
    "MAX_ATTEMPTS": env_int("LINEAGE_WEBHOOK_MAX_ATTEMPTS", 8),
    # The wait after the first failed try, doubled after each next one (with jitter), capped.
    "BACKOFF_SECONDS": env_float("LINEAGE_WEBHOOK_BACKOFF_SECONDS", 2.0),
    "BACKOFF_MAX_SECONDS": env_float("LINEAGE_WEBHOOK_BACKOFF_MAX_SECONDS", 600.0),
    "CONNECT_TIMEOUT_SECONDS": env_float("LINEAGE_WEBHOOK_CONNECT_TIMEOUT_SECONDS", 3.0),
    # Longest wait for any byte of the answer, and for the whole answer.
    "READ_TIMEOUT_SECONDS": env_float("LINEAGE_WEBHOOK_READ_TIMEOUT_SECONDS", 5.0),
    "ANSWER_SECONDS": env_float("LINEAGE_WEBHOOK_ANSWER_SECONDS", 10.0),
    # Bytes of an answer's body read (and kept as its excerpt); the rest is never read.
    "MAX_ANSWER_BYTES": env_int("LINEAGE_WEBHOOK_MAX_ANSWER_BYTES", 4096),
    # Receivers at private, loopback, link-local and other non-global addresses are refused
    # unless allowed here: all of them (a cluster-internal receiver, tests), or the listed
    # networks (CIDRs, e.g. 10.20.0.0/16).
    "ALLOW_PRIVATE": env_bool("LINEAGE_WEBHOOK_ALLOW_PRIVATE", False),
    "ALLOWED_NETWORKS": env_list("LINEAGE_WEBHOOK_ALLOWED_NETWORKS", []),
    # A derive commit's deliveries are sent together, at most this many POSTs at once, and
    # at most PER_HOST of them to one receiver (host and port) at once.
    "POOL_SIZE": env_int("LINEAGE_WEBHOOK_POOL_SIZE", 8),
    "PER_HOST": env_int("LINEAGE_WEBHOOK_PER_HOST", 4),
    # Deliveries due this long without a try (their task lost) are sent again by the sweep.
    "SWEEP_AFTER_SECONDS": env_float("LINEAGE_WEBHOOK_SWEEP_AFTER_SECONDS", 10.0),
}
CELERY_BEAT_SCHEDULE["catalog-sweep-webhooks"] = {
    "task": "catalog.sweep_webhooks",
    "schedule": 5.0,
    "options": {"expires": 5.0},
}
# The Marquez-compatible read API (api/marquez, docs/marquez.md, ADR 0033).
MARQUEZ_API: dict[str, Any] = {
    # Serve /marquez/api/v1/ (Marquez's web UI and marquez-python against this catalog).
    "ENABLED": env_bool("LINEAGE_MARQUEZ_API", True),
    # Host names on which the mount is also served at plain /api/v1/ (for Marquez's UI).
    "HOSTS": [host.lower() for host in env_list("LINEAGE_MARQUEZ_HOSTS", [])],
    # Trusted networks only: reads without a token, as LINEAGE_ALLOW_ANONYMOUS_INGEST. With
    # HOSTS named, only requests to those hosts read without a token (docs/marquez.md).
    "ALLOW_ANONYMOUS_READS": env_bool("LINEAGE_MARQUEZ_ALLOW_ANONYMOUS_READS", False),
}

# The bounded HTTP server of the worker's metrics port and the Kafka consumer's probe port
# (ingest/bounded_server.py, ADRs 0177, 0191, 0196): what each process's server holds,
# whatever reaches its port. Refused at start outside these bounds: no handler or no place
# would answer nothing, and a thread or a place is memory the process keeps.
LINEAGE_BOUNDED_PORT: dict[str, Any] = {
    # Threads answering requests, made once: the connections being answered at once.
    "HANDLERS": env_int("LINEAGE_BOUNDED_PORT_HANDLERS", 4, minimum=1, maximum=64),
    # Accepted connections waiting for a handler, in each of two lines; past that, a 503.
    "WAITING": env_int("LINEAGE_BOUNDED_PORT_WAITING", 16, minimum=1, maximum=1024),
    # A connection's request head must arrive within this of its acceptance, and its
    # answer be taken within as long of its first byte.
    "CONNECTION_SECONDS": env_float(
        "LINEAGE_BOUNDED_PORT_CONNECTION_SECONDS", 2.0, minimum=0.1, maximum=60.0
    ),
}

# Kafka ingest (ingest/kafka/, docs/ingest.md, ADR 0062): off unless bootstrap servers are set.
# The topics are read by ``manage.py consume_kafka``, which checks them and says what is wrong.
_KAFKA_OWN = {"BOOTSTRAP_SERVERS", "TOPICS", "GROUP_ID", "REPLAY_SECONDS"}
LINEAGE_KAFKA: dict[str, Any] = {
    # Enables Kafka ingest. ``mock`` is for ``make run`` only: it starts librdkafka's
    # in-process mock cluster (nothing to install) and puts its address here.
    "BOOTSTRAP_SERVERS": env_str("LINEAGE_KAFKA_BOOTSTRAP_SERVERS", ""),
    # ``topic:kind`` pairs, kind ``openlineage`` (the default for a bare topic) or ``metadata``.
    "TOPICS": env_list("LINEAGE_KAFKA_TOPICS", []),
    "GROUP_ID": env_str("LINEAGE_KAFKA_GROUP_ID", "lineage-catalog"),
    # Every other LINEAGE_KAFKA_<SETTING> (or _FILE) is a librdkafka setting, dots as
    # underscores: LINEAGE_KAFKA_SASL_MECHANISM → sasl.mechanism.
    "CLIENT": env_prefixed("LINEAGE_KAFKA_", _KAFKA_OWN),
    # A batch is stored when it holds this many messages or is this old, whichever is first.
    "BATCH_MESSAGES": env_int("LINEAGE_CONSUMER_BATCH_MESSAGES", 500),
    "BATCH_MS": env_int("LINEAGE_CONSUMER_BATCH_MS", 200),
    # ... or when its messages' values and keys reach this many bytes (at least one message).
    # With librdkafka's prefetch and fetch sizes (ingest/kafka/config.py) it bounds the
    # consumer's memory; docs/ingest.md says how they add up.
    "BATCH_BYTES": env_int("LINEAGE_CONSUMER_BATCH_BYTES", 16 * 1024 * 1024),
    # How much of a dead letter's value (and key) is kept; a message within it is kept whole.
    "DEAD_LETTER_BYTES": env_int("LINEAGE_CONSUMER_DEAD_LETTER_BYTES", 64 * 1024),
    # The consumer's own /healthz, /readyz and /metrics (0: none), on this address: this
    # machine only unless told otherwise (`make run` gives it HOST; the chart 0.0.0.0, for
    # the kubelet's probes and the scrape).
    "PORT": env_int("LINEAGE_CONSUMER_PORT", 8001),
    "HOST": env_str("LINEAGE_CONSUMER_HOST", "127.0.0.1"),
    # How often a consumer writes its partitions' lag into ingest_consumer_lag.
    "LAG_REPORT_SECONDS": env_int("LINEAGE_CONSUMER_LAG_REPORT_SECONDS", 5),
    # The admin's "Replay selected" (a web request) starts no letter and waits for Kafka no
    # longer after this many seconds; the rest stay open for the next run (ADR 0163). Under
    # WEB_GRACEFUL_SECONDS (25), and well under a proxy's usual read timeout (60 s).
    "REPLAY_SECONDS": env_float("LINEAGE_KAFKA_REPLAY_SECONDS", 20.0),
}

# Django's own limit must not cut a body before ingest can answer it with a 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = LINEAGE["MAX_REQUEST_BYTES"] + 1

# Logs go to stdout, one line per record: "plain" for people, "json" (the production default,
# see config/settings/production.py) for the log pipeline. Extra fields passed with
# ``extra={...}`` become JSON keys.
LOG_FORMAT = env_str("LOG_FORMAT", "plain")
# Every log record is redacted like an answer when it is made, whatever logger makes it and
# whatever handler writes it (core/log_redaction.py); the filter on every handler below
# redacts records made otherwise. A handler added here must list "redact" too
# (tests/security/test_log_redaction.py checks every settings module).
LOGGING_CONFIG = "core.log_redaction.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact": {"()": "core.log_redaction.RedactingFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(process)d",
            "timestamp": "time",  # ISO 8601, UTC
            "rename_fields": {
                "levelname": "level",
                "name": "logger",
                "message": "event",
                "process": "pid",
            },
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": LOG_FORMAT,
            "filters": ["redact"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

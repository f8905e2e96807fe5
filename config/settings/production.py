"""Production: every secret from the environment, secure defaults, checked at start-up.

``python manage.py check --deploy`` is clean with these settings (tests/deploy asserts it).
Everything here can be set through the Helm chart's values; see docs/deploy.md.
"""

from typing import Any, cast

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_str
from config.settings.base import *  # noqa: F403
from config.settings.base import ALLOWED_HOSTS, INGEST_PATHS_NOT_REDIRECTED, LOGGING, MIDDLEWARE

DEBUG = False
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
# Django's own deploy check (security.W009) wants 50 characters of some variety.
if len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be at least 50 characters (and not repetitive) in production."
    )

# Kubelet probes and Prometheus address a pod by its IP: allow exactly this pod's address.
_pod_ip = env_str("POD_IP", "")
if _pod_ip:
    ALLOWED_HOSTS = [*ALLOWED_HOSTS, f"[{_pod_ip}]" if ":" in _pod_ip else _pod_ip]

# Behind an ingress that terminates TLS: trust its X-Forwarded-Proto when told to.
if env_bool("DJANGO_TRUST_X_FORWARDED_PROTO", True):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
# Probes and Prometheus call the pods over plain HTTP: never redirect them; nor the
# write endpoints, which in-cluster producers post to over plain HTTP (ADR 0164). Everything
# else (the read API, the admin, the Marquez mount's reads) is redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$", *INGEST_PATHS_NOT_REDIRECTED]
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    # Preloading binds the whole parent domain to HTTPS for years: the domain's owner opts in
    # (DJANGO_HSTS_PRELOAD=true), so not preloading is a choice, not a finding.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Request latency for /metrics: first, so it times everything after it.
MIDDLEWARE = ["ingest.metrics.RequestLatencyMiddleware", *MIDDLEWARE]

# Structured logs: JSON lines on stdout unless LOG_FORMAT=plain.
LOG_FORMAT = env_str("LOG_FORMAT", "json")
_formatters = cast(dict[str, Any], LOGGING["formatters"])
if LOG_FORMAT not in _formatters:
    raise ImproperlyConfigured(f"LOG_FORMAT={LOG_FORMAT!r}: use one of {sorted(_formatters)}.")
cast(dict[str, dict[str, Any]], LOGGING["handlers"])["console"]["formatter"] = LOG_FORMAT
# Celery workers log through Django's LOGGING (JSON), not through their own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# The worker imports these at start: ingest.metrics counts task failures and serves the
# worker's metrics (LINEAGE_WORKER_METRICS_PORT).
CELERY_IMPORTS = ["ingest.metrics"]

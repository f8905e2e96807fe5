"""Production settings: checked at start-up, `check --deploy` clean, JSON logs on stdout."""

import json
import os
import re
import subprocess
import sys

import pytest

from tests.deploy.rendering import ROOT, VARIANTS, render

SECRET_KEY = "production-settings-test-key-" + "0123456789abcdefghijklmnopqrstuvwxyz"


def _production(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": SECRET_KEY,
        "DATABASE_URL": os.environ.get(
            "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/lc_deploy"
        ),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/12"),
    }
    base.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


def _configmap_env(variant: str) -> dict[str, str]:
    (config_map,) = render(variant).of_kind("ConfigMap")
    return dict(config_map["data"])


@pytest.mark.parametrize("variant", ["default", "production"])
def test_check_deploy_is_clean_with_the_chart_configuration(variant: str) -> None:
    result = _production(
        "manage.py", "check", "--deploy", "--fail-level", "WARNING", **_configmap_env(variant)
    )
    output = result.stdout + result.stderr
    codes = set(re.findall(r"\(([\w.]+\.[CEWI]\d{3})\)", output))
    assert not codes, output[-3000:]
    assert result.returncode == 0, output[-3000:]


def test_check_deploy_fails_when_security_is_turned_off() -> None:
    """The assertion above can fail: secure cookies off is a deploy finding."""
    result = _production("manage.py", "check", "--deploy", DJANGO_SECURE_COOKIES="false")
    assert "security.W012" in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "x" * 60}, "at least 50 characters"),
        ({"DJANGO_SECRET_KEY": "short-but-varied-0123456789"}, "at least 50 characters"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT"),
    ],
)
def test_production_refuses_to_start_misconfigured(env: dict[str, str], message: str) -> None:
    result = _production("manage.py", "check", **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and message in result.stderr


def test_debug_is_off_and_the_pod_ip_is_an_allowed_host() -> None:
    script = (
        "import django; django.setup(); from django.conf import settings; import json; "
        "print(json.dumps([settings.DEBUG, settings.ALLOWED_HOSTS, settings.MIDDLEWARE[0],"
        " settings.CELERY_IMPORTS, settings.SECURE_PROXY_SSL_HEADER,"
        " settings.SECURE_REDIRECT_EXEMPT]))"
    )
    result = _production(
        "-c", script, POD_IP="10.1.2.3", DJANGO_ALLOWED_HOSTS="lineage.example.com", DEBUG="1"
    )
    debug, hosts, first_middleware, imports, proxy, exempt = json.loads(result.stdout)
    assert debug is False
    assert hosts == ["lineage.example.com", "10.1.2.3"]
    assert first_middleware == "ingest.metrics.RequestLatencyMiddleware"
    assert imports == ["ingest.metrics"]
    assert proxy == ["HTTP_X_FORWARDED_PROTO", "https"]
    # Probes and the write endpoints are answered over plain HTTP, not redirected (ADR 0164:
    # tests/ingest/test_fastpath.py serves a write with these exemptions).
    written = ["api/v1/lineage", "api/v1/lineage/batch", "api/v1/lineage/edges", "api/v1/metadata"]
    for path in ["healthz", "readyz", "metrics", *written]:
        assert any(re.search(pattern, path) for pattern in exempt), path
    assert not any(re.search(pattern, "api/v1/jobs") for pattern in exempt)
    ipv6 = _production("-c", script, POD_IP="fd00::7")
    assert json.loads(ipv6.stdout)[1][-1] == "[fd00::7]"


def test_logs_are_json_lines_on_stdout() -> None:
    script = (
        "import django, logging; django.setup(); "
        "logging.getLogger('ingest.test').warning('events_stored', extra={'count': 3})"
    )
    result = _production("-c", script)
    (line,) = result.stdout.splitlines()
    record = json.loads(line)
    assert record["event"] == "events_stored" and record["count"] == 3
    assert record["level"] == "WARNING" and record["logger"] == "ingest.test"
    assert record["time"].endswith("+00:00")
    assert result.stderr == ""


def test_the_variants_deploy_with_the_settings_they_configure() -> None:
    assert VARIANTS["production"]["existingSecret"]
    env = _configmap_env("production")
    script = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.LINEAGE['MAX_REQUEST_BYTES'], settings.CSRF_TRUSTED_ORIGINS[0], "
        "settings.REST_FRAMEWORK['NUM_PROXIES'])"
    )
    result = _production("-c", script, **env)
    assert result.stdout.split() == ["33554432", "https://lineage.example.com", "1"], result.stderr

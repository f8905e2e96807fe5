"""Logs and command output are redacted like answers (issue 38, item 9).

A derivation error for an input namespace ``postgres://svc:PW@db:5432`` was logged as
``derive_event_failed ... 'postgres://svc:PW@db:5432'``. Every log record now goes through
``core.redaction`` when it is made (core/log_redaction.py), whatever logger made it, and
every handler of ``LOGGING`` redacts a record made otherwise.
"""

import copy
import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from celery import current_app
from django.conf import settings
from django.core.management import call_command
from django.utils.log import configure_logging

from core.log_redaction import RedactingFilter
from ingest.models import Event

FORMATS = ["plain", "json"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def log_output(request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture):
    """The service's own LOGGING (its console handler, filter and formatter ``format``) at
    DEBUG, writing to a buffer instead of stdout; pytest's capture handler beside it.
    Yields a function returning everything both got."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    buffer = io.StringIO()
    config = copy.deepcopy(settings.LOGGING)
    config["handlers"]["console"].update(formatter=request.param, stream=buffer)
    config["root"]["level"] = "DEBUG"
    configure_logging(settings.LOGGING_CONFIG, config)  # as django.setup() does
    caplog.set_level(logging.DEBUG)

    def output(handler_only: bool = False) -> str:
        if handler_only:
            return buffer.getvalue()
        lines = [line for line in buffer.getvalue().splitlines() if line.strip()]
        assert lines  # the handler wrote
        if request.param == "json":  # one JSON object a line (ADR 0012)
            assert all(isinstance(orjson.loads(line), dict) for line in lines), lines
        records = "\n".join(
            f"{record.getMessage()} {record.exc_text} {record.stack_info} {vars(record)}"
            for record in caplog.records
        )
        return "\n".join([buffer.getvalue(), caplog.text, records])

    yield output
    root.handlers[:], root.level = handlers, level


def _assert_no_secret(output: str, secrets: list[str]) -> None:
    for secret in secrets:
        assert secret not in output, (secret, output[max(0, output.find(secret) - 300) :][:600])


LOGGER_SECRETS = ["PLANTED-ARG", "PLANTED-EXC", "PLANTED-EXTRA", "PLANTED-DICT", "PLANTED-FMT"]


@pytest.mark.parametrize("log_output", FORMATS, indirect=True)
@pytest.mark.parametrize("name", ["catalog.services.derivation.batch", "ingest.kafka", "other"])
def test_a_log_record_from_any_logger_is_redacted_in_every_part(log_output, caplog, name) -> None:
    # pytest's handler first: it sees each record before any handler's filter could redact it.
    root = logging.getLogger()
    root.handlers.remove(caplog.handler)
    root.handlers.insert(0, caplog.handler)
    logger = logging.getLogger(name)
    logger.warning("derive_event_failed event=%d error=%s", 7, "'postgres://svc:PLANTED-ARG@db'")
    logger.info("conf password=%s", "PLANTED-FMT")  # the key in the format, the value an arg
    try:
        raise ValueError("connect failed: {'password': {'nested': 'PLANTED-EXC'}}")
    except ValueError:
        logger.exception("failed", extra={"detail": {"token": ["PLANTED-EXTRA"]}})
    logger.debug({"event": "conf", "sasl.jaas.config": 'password="PLANTED-DICT"'})
    output = log_output()
    _assert_no_secret(output, LOGGER_SECRETS)
    # A record made without a logger is redacted by the filter of the service's handlers.
    fields = {"name": name, "levelno": logging.WARNING, "levelname": "WARNING"}
    made = logging.makeLogRecord({**fields, "msg": "token=%s", "args": ("PLANTED-MADE",)})
    root.handle(made)
    assert "token=***REDACTED***" in log_output(handler_only=True)
    _assert_no_secret(log_output(handler_only=True), ["PLANTED-MADE"])
    assert "derive_event_failed event=7 error='postgres://svc:***REDACTED***@db'" in output
    assert "ValueError" in output  # the traceback is kept, redacted


def test_named_arguments_are_kept_redacted_for_formatters_that_read_them(caplog) -> None:
    """granian's access record carries its fields as named arguments (config/server.py)."""
    from config.server import AccessFormatter

    caplog.set_level(logging.INFO)
    logging.getLogger("granian.access").info(
        "%(path)s", {"path": "/api?token=PLANTED-QS", "status": 200, "dt_ms": 1.25, "_h0": "x"}
    )
    [record] = caplog.records
    line = orjson.loads(AccessFormatter().format(record))
    assert line["path"] == "/api?token=***REDACTED***" and line["status"] == 200


EVENT_SECRETS = [
    "PLANTED-NS",
    "PLANTED-NS2",
    "PLANTED-NAME",
    "PLANTED-FIELD",
    "PLANTED-ERR",
    "PLANTED-FACET",
    "PLANTED-JOB",
]


def _events() -> list[dict[str, Any]]:
    base = {
        "eventTime": "2026-11-01T10:00:00.000Z",
        "producer": "https://example.com/log-redaction",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    failing = {
        **base,
        "eventType": "START",
        "run": {"runId": "0b8f3e9c-2fa1-41d2-883f-0016d3cca427"},
        "job": {"namespace": "etl", "name": "fails"},
        "inputs": [{"namespace": "postgres://svc:PLANTED-NS@db:5432", "name": " "}],
    }
    planted = {
        **base,
        "eventType": "FAIL",
        "run": {
            "runId": "1b8f3e9c-2fa1-41d2-883f-0016d3cca427",
            "facets": {
                "errorMessage": {
                    "_producer": base["producer"],
                    "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/ErrorMessageRunFacet.json",
                    "message": "connect failed: {'password': {'v': 'PLANTED-ERR'}}",
                    "programmingLanguage": "python",
                },
                "spark_conf": {"spark.hadoop.fs.s3a.secret.key": "PLANTED-FACET"},
            },
        },
        "job": {"namespace": "etl", "name": "load?token=PLANTED-JOB"},
        "inputs": [
            {
                "namespace": "postgres://svc:PLANTED-NS2@db:5432",
                "name": "shop.orders;password=PLANTED-NAME",
                "facets": {
                    "schema": {
                        "_producer": base["producer"],
                        "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SchemaDatasetFacet.json",
                        "fields": [{"name": "password=PLANTED-FIELD", "type": "text"}],
                    }
                },
            }
        ],
    }
    return [failing, planted]


@pytest.fixture
def derive_task() -> Any:
    """The derive task as a worker finds it. Celery's Django fixup sets Django up again when
    it imports the apps' tasks, configuring logging anew: done before ``log_output``."""
    current_app.loader.import_default_modules()
    return current_app.tasks["catalog.derive_events"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("log_output", FORMATS, indirect=True)
def test_no_log_line_of_ingest_and_derivation_shows_a_planted_secret(
    derive_task, log_output, ingest_client
) -> None:
    """A real event through the ingest API, then the derive task as a worker runs it."""
    for event in _events():
        response = ingest_client.post(
            "/api/v1/lineage", data=orjson.dumps(event), content_type="application/json"
        )
        assert response.status_code == 201, response.content
    ids = list(Event.objects.order_by("id").values_list("id", flat=True))
    derive_task.apply(args=[ids])
    failed = Event.objects.get(job_name="fails")
    assert failed.derivation_status == "failed" and "PLANTED-NS" in failed.derivation_error
    output = log_output()
    _assert_no_secret(output, EVENT_SECRETS)
    assert f"derive_event_failed event={failed.id}" in output  # the line in question was logged
    assert "postgres://svc:***REDACTED***@db:5432" in output


@pytest.mark.django_db(transaction=True)
def test_rederive_output_is_redacted(ingest_client) -> None:
    """``manage.py rederive`` prints each failed event's error, which quotes the event."""
    failing = _events()[0]
    response = ingest_client.post(
        "/api/v1/lineage", data=orjson.dumps(failing), content_type="application/json"
    )
    assert response.status_code == 201, response.content
    out, err = io.StringIO(), io.StringIO()
    call_command("rederive", stdout=out, stderr=err)
    shown = out.getvalue() + err.getvalue()
    assert "failed 1" in shown and "postgres://svc:***REDACTED***@db:5432" in shown
    assert "PLANTED-NS" not in shown


def test_backfill_output_is_redacted(tmp_path: Path) -> None:
    refused = {"eventType": "START", "eventTime": "postgres://u:PLANTED-BF@h", "run": {}}
    (tmp_path / "events.ndjson").write_text(json.dumps(refused) + "\n")
    out, err = io.StringIO(), io.StringIO()
    call_command("backfill", str(tmp_path), stdout=out, stderr=err)
    shown = out.getvalue() + err.getvalue()
    assert "refused 1" in shown
    assert "PLANTED-BF" not in shown


SETTINGS = ["config.settings.development", "config.settings.test", "config.settings.production"]
PROBE = """
import django, json, logging
from django.conf import settings
django.setup()
logging.getLogger("catalog.probe").warning("error=%s", "'postgres://svc:PLANTED-PROBE@db'")
logging.getLogger("ingest.probe").warning("conf", extra={"conf": {"password": "PLANTED-PROBE"}})
handlers = settings.LOGGING["handlers"]
print(json.dumps({
    "config": settings.LOGGING_CONFIG,
    "filters": {name: handler.get("filters", []) for name, handler in handlers.items()},
    "redact": settings.LOGGING["filters"]["redact"],
}))
"""


@pytest.mark.parametrize("module", SETTINGS)
def test_every_settings_module_redacts_every_handler(module: str) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": module,
        "DJANGO_SECRET_KEY": "k" * 20 + "0123456789abcdefghijklmnopqrstuvwxyz",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    *lines, summary = done.stdout.strip().splitlines()
    found = json.loads(summary)
    assert found["config"] == "core.log_redaction.configure"
    assert found["redact"] == {"()": f"{RedactingFilter.__module__}.RedactingFilter"}
    assert found["filters"] and all("redact" in names for names in found["filters"].values())
    logged = "\n".join(lines) + done.stderr
    assert "***REDACTED***" in logged and "PLANTED-PROBE" not in logged

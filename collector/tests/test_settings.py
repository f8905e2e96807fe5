"""The README's configuration table and its failure-reporting promise, one row at a time."""

import logging

import lineage_collector as lc
import pytest
from lineage_collector.config import Config
from lineage_collector.errors import counters, report


def test_every_documented_variable_reaches_the_configuration(monkeypatch):
    for name, value in {
        "OPENLINEAGE_URL": "http://catalog:8000",
        "OPENLINEAGE_API_KEY": "lc_ingest_k",
        "OPENLINEAGE_NAMESPACE": "shop",
        "LINEAGE_SILENT_FAIL": "false",
        "LINEAGE_TIMEOUT": "0.7",
        "LINEAGE_QUEUE_SIZE": "5",
        "LINEAGE_EXIT_FLUSH_TIMEOUT": "1.5",
        "LINEAGE_CAPTURE_S3_METADATA": "true",
    }.items():
        monkeypatch.setenv(name, value)
    config = Config.from_env()
    assert config.batch_url == "http://catalog:8000/api/v1/lineage/batch"
    assert (config.api_key, config.namespace, config.silent_fail) == ("lc_ingest_k", "shop", False)
    assert (config.timeout, config.queue_size, config.exit_flush_timeout) == (0.7, 5, 1.5)
    assert config.capture_s3_metadata_calls
    # "Every keyword of install() overrides the environment."
    assert Config.from_env(namespace="other", queue_size=9).namespace == "other"


def test_without_a_url_events_are_logged(caplog):
    counters.reset()
    lc.install(namespace="tests", flush_interval=0.01)
    try:
        with caplog.at_level(logging.INFO, logger="lineage_collector.events"):
            with lc.job("logged"):
                pass
            assert lc.flush(5)
    finally:
        lc.uninstall()
    logged = [record.getMessage() for record in caplog.records if "logged" in record.getMessage()]
    assert [
        ('"eventType":"START"' in line, '"eventType":"COMPLETE"' in line) for line in logged
    ] == [
        (True, False),
        (False, True),
    ]


def test_disabled_installs_no_hooks(monkeypatch):
    sa = pytest.importorskip("sqlalchemy")
    botocore_client = pytest.importorskip("botocore.client")
    from lineage_collector.hooks.sqlalchemy import _after_cursor_execute

    original = botocore_client.BaseClient._make_api_call
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    lc.install()
    try:
        assert botocore_client.BaseClient._make_api_call is original
        assert not sa.event.contains(
            sa.engine.Engine, "after_cursor_execute", _after_cursor_execute
        )
    finally:
        lc.uninstall()


def test_a_failure_is_counted_every_time_and_logged_once_a_minute_per_kind(caplog):
    counters.reset()
    with caplog.at_level(logging.WARNING, logger="lineage_collector"):
        for _ in range(3):
            report("send", ConnectionError("down"))
        report("send", TimeoutError("slow"))  # another kind: logged too
    assert counters.values["errors.send"] == 4
    assert [record.getMessage().split("error=")[1].split(":")[0] for record in caplog.records] == [
        "ConnectionError",
        "TimeoutError",
    ]
    counters.reset()

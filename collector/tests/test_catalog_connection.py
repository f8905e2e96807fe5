"""The collector and its catalog's connection: hangs, redirects, long answers, idle closes, fork."""

import json
import logging
import os
import time

import lineage_collector as lc
import pytest
from fake_catalog_server import Catalog
from lineage_collector.errors import counters


@pytest.mark.parametrize("transport", ["http", "openlineage"])
def test_a_forked_child_sends_on_a_connection_of_its_own(
    transport, keep_alive_catalog, installed, monkeypatch
):
    # A child that wrote on the parent's kept-alive socket would interleave its requests
    # with the parent's on one stream. The fork test above cannot see that: its catalog
    # speaks HTTP/1.0 and closes every connection. openlineage-python keeps a requests
    # Session, which the child inherited with the parent's pooled sockets.
    catalog = keep_alive_catalog
    if transport == "openlineage":
        pytest.importorskip("openlineage.client")
        monkeypatch.setenv("OPENLINEAGE_URL", catalog.url)
        installed(transport="openlineage")
    else:
        installed(url=catalog.url)
    with lc.job("parent"):
        pass
    assert lc.flush(5)
    parent_ports = {request["port"] for request in catalog.requests}
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with lc.job("child"):
                pass
            code = 0 if lc.flush(5) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0

    def names(request: dict) -> set[str]:
        body = request["body"] if isinstance(request["body"], list) else [request["body"]]
        return {event["job"]["name"] for event in body}

    child_ports = {request["port"] for request in catalog.requests if "child" in names(request)}
    assert child_ports
    assert not child_ports & parent_ports


def test_a_long_answer_from_the_catalog_does_not_fail_the_next_batch(keep_alive_catalog, installed):
    # The transport reads at most 64 kB of an answer (a batch report with a warning per
    # event can be longer) and kept the connection: the unread rest made the next batch's
    # answer unreadable, so a batch the catalog had stored counted as failed and was sent
    # again.
    catalog = keep_alive_catalog
    catalog.answer = json.dumps({"warnings": ["x" * 1_000] * 100}).encode()
    installed(url=catalog.url)
    for name in ("first", "second", "third"):
        with lc.job(name):
            pass
        assert lc.flush(5)
    assert lc.stats().get("errors.send", 0) == 0, lc.stats()
    assert [event["job"]["name"] for event in catalog.events()] == [
        name for name in ("first", "second", "third") for _ in range(2)
    ]


def test_a_catalog_that_redirects_is_not_counted_as_sent(catalog, installed):
    # http:// behind an ingress that redirects to https://: the transport took the 301 for
    # success, so every event was counted as sent and none was stored.
    catalog.mode = "redirect"
    installed(url=catalog.url)
    with lc.job("redirected"):
        pass
    lc.flush(2)
    assert lc.stats().get("events.sent", 0) == 0
    assert lc.stats()["events.rejected"] == 2


def test_flush_waits_out_a_retry_that_is_due_before_its_deadline(installed):
    # flush() gave up as soon as the sender was backing off, so one transient error (a
    # kept-alive connection the catalog had closed) lost the last batch at exit although
    # the retry was due a quarter of a second later.
    class FailsOnce(lc.transport.MemoryTransport):
        failed = False

        def send(self, events):
            if not self.failed:
                self.failed = True
                raise ConnectionResetError("stale connection")
            super().send(events)

    transport = FailsOnce()
    installed(transport=transport)
    with lc.job("retried"):
        pass
    assert lc.flush(5)
    assert [event["eventType"] for event in transport.events] == ["START", "COMPLETE"]


def test_a_connection_the_catalog_closed_while_idle_is_not_a_send_error(installed):
    # Servers close idle kept-alive connections; the next batch on it failed (broken pipe,
    # remote disconnected), was logged as an error, and waited for a backoff.
    catalog = Catalog(keep_alive=True, idle_timeout=0.2)
    try:
        installed(url=catalog.url)
        for name in ("before", "after"):
            with lc.job(name):
                pass
            assert lc.flush(5)
            time.sleep(0.5)  # the catalog closes the idle connection
        assert lc.stats().get("errors.send", 0) == 0, lc.stats()
        assert len(catalog.events()) == 4
    finally:
        catalog.server.shutdown()
        catalog.server.server_close()


def test_edges_and_metadata_never_follow_a_redirect_with_the_token(catalog, installed):
    # urllib follows a 301/302 of a POST as a GET to wherever it points, Authorization
    # header included: the ingest token went to another host (an SSO page, a typo'd
    # ingress), and a 200 there made emit_edge answer True for an edge never stored.
    elsewhere = Catalog()
    try:
        catalog.mode = "redirect"
        catalog.location = f"{elsewhere.url}/login"
        installed(url=catalog.url, api_key="lc_ingest_secret")
        assert lc.emit_edge("a.b.c", "d.e.f") is False
        assert lc.MetadataAPI().send(lc.MetadataModel(subject="a", action="b")) is False
        assert elsewhere.requests == []
    finally:
        elsewhere.server.shutdown()
        elsewhere.server.server_close()


def test_a_4xx_is_refused_without_a_retry_and_408_or_429_are_retried(catalog, installed):
    # The README: a 4xx (but 408 and 429) is a refusal, never counted as sent, not sent
    # again; 408 and 429 are the catalog asking for the same batch later.
    catalog.statuses = [400]
    installed(url=catalog.url)
    with lc.job("refused"):
        pass
    lc.flush(2)
    assert len(catalog.requests) == 1
    assert lc.stats().get("events.sent", 0) == 0
    assert lc.stats()["events.rejected"] == 2
    for status in (408, 429):
        catalog.requests.clear()
        catalog.statuses = [status]
        with lc.job(f"asked-again-{status}"):
            pass
        assert lc.flush(5)
        assert len(catalog.requests) == 2  # the same batch, sent again after a backoff
        assert catalog.requests[0]["body"] == catalog.requests[1]["body"]
    assert lc.stats()["events.sent"] == 4
    assert lc.stats()["events.rejected"] == 2


def test_events_a_200_batch_report_refuses_are_counted_and_logged_not_sent(
    catalog, installed, caplog
):
    # The catalog stores a batch's valid events and answers 200 with the ones it refused
    # (docs/problems.md: partial_success, failed_events). Every event of such a batch was
    # counted as sent, so a refused event was lost with no count, no log, and no exception
    # from flush() in strict mode.
    report = {
        "status": "partial_success",
        "summary": {
            "received": 2,
            "successful": 1,
            "failed": 1,
            "retriable": 0,
            "non_retriable": 1,
        },
        "failed_events": [{"index": 1, "reason": "event over 8 MiB", "retriable": False}],
        # A stored event's warnings follow and can run past what the worker reads of an
        # answer (64,000 bytes): the summary is read from the start.
        "warnings": [{"index": 0, "id": 1, "warnings": ["x" * 100_000]}],
    }
    catalog.answer = json.dumps(report).encode()
    # Sent when flushed, so that START and COMPLETE are one batch, whatever the load.
    installed(url=catalog.url, flush_interval=60)
    with caplog.at_level(logging.WARNING, logger="lineage_collector"):
        with lc.job("half-stored"):
            pass
        lc.flush(2)
    assert len(catalog.requests) == 1  # not sent again: the catalog said not retriable
    assert lc.stats()["events.sent"] == 1
    assert lc.stats()["events.rejected"] == 1
    assert lc.stats()["errors.send.rejected"] == 1
    assert "refused 1 of 2 events" in caplog.text
    assert "event over 8 MiB" in caplog.text

    catalog.answer = json.dumps({**report, "warnings": []}).encode()
    counters.reset()
    installed(url=catalog.url, flush_interval=60, silent_fail=False)
    with lc.job("strict"):
        pass
    with pytest.raises(lc.CollectorError, match="refused 1 of 2"):
        lc.flush(2)

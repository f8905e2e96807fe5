"""Getting events out of the process: batching, backoff and a circuit breaker (worker only).

Transports have one method, ``send(events) -> None``, and raise on failure; the
:class:`Sender` decides when to send, how long to back off and when to stop trying.
"""

import gzip
import http.client
import json
import logging
import random
import re
import time
from collections import deque
from typing import Any, Protocol
from urllib.parse import urlsplit

from lineage_collector.config import Config, bearer_header
from lineage_collector.errors import report

event_logger = logging.getLogger("lineage_collector.events")

_MAX_PENDING = 10_000
_MAX_ATTEMPTS = 3
_BREAKER_FAILURES = 5
_BREAKER_SECONDS = 30.0
_MAX_BACKOFF = 30.0


class Transport(Protocol):
    def send(self, events: list[dict[str, Any]]) -> None: ...


class Rejected(Exception):
    """The catalog refused the batch, or ``refused`` of its events, for good: do not retry.

    A 4xx other than 408/429 or a redirect refuses the whole batch (``refused`` is None); a
    200 batch report with failed events (``partial_success``) refuses those and stored the
    rest: a refused event is neither sent again (the catalog calls it not retriable) nor
    counted as sent.
    """

    def __init__(self, message: str, refused: int | None = None) -> None:
        super().__init__(message)
        self.refused = refused


# The batch report's summary comes first in the catalog's answer, so it is found in the
# first 64,000 bytes read even when the failed events and warnings that follow run longer.
_FAILED = re.compile(rb'"summary"\s*:\s*\{[^{}]*?"failed"\s*:\s*(\d+)')
_REASON = re.compile(rb'"reason"\s*:\s*"((?:[^"\\]|\\.){0,300})')


def refused_in_report(text: bytes) -> tuple[int, str]:
    """How many events a 200 batch report says were refused, and the first one's reason."""
    if b'"partial_success"' not in text:
        return 0, ""
    found = _FAILED.search(text)
    reason = _REASON.search(text)
    return (
        int(found.group(1)) if found else 0,
        reason.group(1).decode("utf-8", "replace") if reason else "",
    )


class HttpTransport:
    """gzip JSON batches to ``/api/v1/lineage/batch`` on one kept-alive connection."""

    def __init__(self, url: str, api_key: str | None, timeout: float) -> None:
        parts = urlsplit(url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port
        self.path = parts.path or "/"
        self.timeout = timeout
        self.headers = {
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
            "User-Agent": "lineage-collector",
        }
        self.api_key = api_key  # its header is made at each send: a bad key fails the send
        self.connection: http.client.HTTPConnection | None = None

    def after_fork(self) -> None:
        """Forget the parent's socket without closing it: the parent still uses it."""
        self.connection = None

    def _connect(self) -> http.client.HTTPConnection:
        if self.connection is None:
            factory = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            self.connection = factory(self.host, self.port, timeout=self.timeout)
        return self.connection

    def _exchange(self, body: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        connection = self._connect()
        try:
            headers = {**self.headers, **bearer_header(self.api_key)}
            connection.request("POST", self.path, body=body, headers=headers)
            response = connection.getresponse()
            return response, response.read(64_000)
        except Exception:
            self.close()
            raise

    def send(self, events: list[dict[str, Any]]) -> None:
        body = gzip.compress(
            json.dumps(events, separators=(",", ":"), default=str).encode(), compresslevel=5
        )
        reused = self.connection is not None
        try:
            response, text = self._exchange(body)
        except ConnectionError:
            if not reused:
                raise
            # Servers close a kept-alive connection that was idle for a few seconds; the
            # batch met a closed socket (broken pipe, reset, disconnected before any
            # answer), so it goes once more on a new connection instead of counting as a
            # failure and waiting out a backoff (or the exit flush's whole bound).
            response, text = self._exchange(body)
        if not response.isclosed():
            # A longer answer (a batch report with a warning per event) is not read to its
            # end: the connection cannot carry the next request, so it is not kept.
            self.close()
        if response.status in (408, 429) or response.status >= 500:
            raise ConnectionError(f"catalog answered {response.status}")
        if response.status >= 400:
            raise Rejected(f"catalog refused the batch ({response.status}): {text[:300]!r}")
        if response.status >= 300:
            # Not followed (a POST's body is not re-sent on a redirect) and not a success:
            # the batch was not stored. Typically http:// behind an ingress that wants https.
            location = response.getheader("Location", "")
            raise Rejected(
                f"catalog redirected the batch ({response.status}) to {location!r}:"
                " set OPENLINEAGE_URL to where it points"
            )
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        refused, reason = refused_in_report(text)
        if refused:
            # Stored, but not all of it: the batch report lists the events it refused.
            raise Rejected(
                f"catalog refused {refused} of {len(events)} events of the batch: {reason!r}",
                refused=min(refused, len(events)),
            )

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class LoggingTransport:
    """Logs every event as JSON on ``lineage_collector.events`` (development, no catalog)."""

    def send(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            event_logger.info(json.dumps(event, separators=(",", ":"), default=str))


class MemoryTransport:
    """Keeps the events in a list (tests, and checking what a service emits)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def send(self, events: list[dict[str, Any]]) -> None:
        self.events.extend(events)


class OpenLineageTransport:
    """Sends through openlineage-python's configured transport (``openlineage.yml`` etc.)."""

    def __init__(self) -> None:
        self.client: Any = self._new_client()

    @staticmethod
    def _new_client() -> Any:
        # openlineage-python is an optional extra (collector/pyproject.toml).
        from openlineage.client import OpenLineageClient

        return OpenLineageClient()

    def send(self, events: list[dict[str, Any]]) -> None:
        if self.client is None:
            self.client = self._new_client()
        for event in events:
            self.client.transport.emit(event)

    def after_fork(self) -> None:
        """Drop the inherited client: its session pools the parent's kept-alive sockets.

        Not closed (that would act on sockets the parent uses), and not rebuilt here: this
        runs in the fork handler, where reading configuration files has no place. The
        child's first send builds its own.
        """
        self.client = None

    def close(self) -> None:
        close = getattr(getattr(self.client, "transport", None), "close", None)
        if close is not None:
            close()


def transport_for(config: Config) -> Any:
    """The configured transport: an explicit one, the OpenLineage client, HTTP, or logging."""
    if config.transport == "openlineage":
        return OpenLineageTransport()
    if config.transport is not None:
        return config.transport
    if config.batch_url:
        return HttpTransport(config.batch_url, config.api_key, config.timeout)
    return LoggingTransport()


class Sender:
    """Buffers events and sends them in batches; never raises, never blocks the host."""

    def __init__(self, transport: Any, config: Config, counters: Any) -> None:
        self.transport = transport
        self.config = config
        self.counters = counters
        self.pending: deque[dict[str, Any]] = deque()
        self.oldest = 0.0
        self.failures = 0
        self.attempts = 0  # on the batch at the head of ``pending``
        self.next_attempt = 0.0

    def add(self, event: dict[str, Any]) -> None:
        if not self.pending:
            self.oldest = time.monotonic()
        if len(self.pending) >= _MAX_PENDING:
            self.pending.popleft()
            self.counters.bump("events.dropped")
        self.pending.append(event)

    def idle(self, until: float | None = None) -> bool:
        """Nothing left to send, or nothing that can be sent before ``until`` (default: now),
        backing off or with the circuit open."""
        if not self.pending:
            return True
        return self.next_attempt > (time.monotonic() if until is None else until)

    def sent_everything(self) -> bool:
        return not self.pending

    def maybe_send(self, now: float, force: bool = False) -> None:
        while self.pending and now >= self.next_attempt:
            due = force or len(self.pending) >= self.config.batch_size
            if not due and now - self.oldest < self.config.flush_interval:
                return
            if not self._send_one_batch(now):
                return
            now = time.monotonic()

    def _send_one_batch(self, now: float) -> bool:
        batch = [
            self.pending[index] for index in range(min(self.config.batch_size, len(self.pending)))
        ]
        try:
            self.transport.send(batch)
        except Rejected as error:
            refused = len(batch) if error.refused is None else error.refused
            self._drop(len(batch) - refused, "events.sent")
            self._drop(refused, "events.rejected")
            report("send.rejected", error)
            return True
        except Exception as error:
            self._failed(now, len(batch), error)
            return False
        self._drop(len(batch), "events.sent")
        self.failures = 0
        return True

    def _drop(self, count: int, counter: str) -> None:
        for _ in range(count):
            self.pending.popleft()
        if count:
            self.counters.bump(counter, count)
        self.attempts = 0
        self.oldest = time.monotonic()

    def _failed(self, now: float, size: int, error: Exception) -> None:
        self.failures += 1
        self.attempts += 1
        report("send", error)
        if self.attempts >= _MAX_ATTEMPTS:
            self._drop(size, "events.dropped_after_retries")
        if self.failures >= _BREAKER_FAILURES:
            # Circuit open: no request at all for a while, then one trial batch.
            self.counters.bump("circuit.opened")
            self.next_attempt = now + _BREAKER_SECONDS
            self.failures = _BREAKER_FAILURES - 1
            return
        backoff = min(_MAX_BACKOFF, 0.5 * 2 ** (self.failures - 1))
        self.next_attempt = now + backoff * random.uniform(0.5, 1.0)

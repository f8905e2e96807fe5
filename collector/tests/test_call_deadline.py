"""emit_edge and MetadataAPI.send hold their caller at most LINEAGE_CALL_TIMEOUT in all (ADR 0161).

Against real servers on 127.0.0.1 that accept and then stall or trickle. The old sender's
timeout applied to each read: a catalog sending its answer a byte every 0.2 s held
emit_edge, documented as giving up after 5 s, for as long as it went on sending (still
held after 20 s).
"""

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import lineage_collector as lc
import pytest
from lineage_collector import deadline_http
from slow_catalog_server import SlowCatalog, silent, slow_reader, trickle

DEADLINE = 0.3
# What a loaded machine may add to the deadline: waking the caller, the lookup's thread.
SLACK = 0.7
# How long a test waits for a call that does not give up: long enough to tell it from one
# that does, short enough that a planted bug fails in seconds rather than when the slow
# server's whole answer is in.
WAIT = 3.0

STATUS = b"HTTP/1.1 200 OK\r\n"
END = b"Content-Length: 0\r\n\r\n"
SERVERS = {
    "never answers": (silent, "http"),
    "never completes the TLS handshake": (silent, "https"),
    # 38 bytes at 0.05 s: the whole 200 comes after 1.9 s, each byte well within a read's.
    "trickles the status line": (trickle(b"", STATUS + END, 0.05), "http"),
    "trickles a header": (trickle(STATUS, b"X-Wait: " + b"." * 60 + b"\r\n" + END, 0.05), "http"),
}
CALLS: dict[str, Callable[[], bool]] = {
    "emit_edge": lambda: lc.emit_edge("a.b.c", "d.e.f"),
    "metadata": lambda: lc.MetadataAPI().send(lc.MetadataModel(subject="alice", action="ran")),
}


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    """How long ``call`` held its thread (at most WAIT), and what it returned."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(WAIT)
    return time.monotonic() - started, (result[0] if result else "still held")


@pytest.fixture
def slow_catalog() -> Iterator[Callable[..., SlowCatalog]]:
    servers: list[SlowCatalog] = []

    def start(handler: Any, **options: Any) -> SlowCatalog:
        servers.append(SlowCatalog(handler, **options))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("call", CALLS)
def test_a_call_gives_up_within_its_deadline_and_counts_it(
    call, server, slow_catalog, installed, caplog
):
    handler, scheme = SERVERS[server]
    catalog = slow_catalog(handler)
    installed(url=f"{scheme}://127.0.0.1:{catalog.port}", call_timeout=DEADLINE)
    with caplog.at_level(logging.WARNING, logger="lineage_collector"):
        took, result = timed(CALLS[call])
    assert result is False
    assert DEADLINE - 0.05 < took < DEADLINE + SLACK, took
    assert lc.stats()[f"errors.{call}"] == 1
    assert f"where={call}" in caplog.text


def test_metadata_api_timeout_is_the_whole_call(slow_catalog, installed):
    # MetadataAPI(timeout=) was a per-read timeout too; it is now the call's, in all.
    catalog = slow_catalog(trickle(STATUS, b"X-Wait: " + b"." * 60 + b"\r\n" + END, 0.05))
    installed(url=catalog.url)  # the setting's default, 5 s, is not what applies
    record = lc.MetadataModel(subject="alice", action="ran")
    took, result = timed(lambda: lc.MetadataAPI(timeout=DEADLINE).send(record))
    assert result is False
    assert took < DEADLINE + SLACK, took


def test_sending_to_a_catalog_that_reads_slowly_counts_toward_the_deadline(slow_catalog, installed):
    # 24 MB of request to a catalog reading 256 kB every 60 ms (4.3 MB/s) behind a 256 kB
    # window: the first 4 MB or so fill the kernel's buffers at once, then every send waits
    # for room and makes progress, so a timeout given to each send never fires and the
    # whole request would take about 4.7 s. (An SSL socket's sendall gives each piece the
    # whole timeout again.) Building and encoding the 24 MB body is in the figure too: at
    # load 11 the call took 1.06 s with the deadline kept, hence a second of slack more.
    catalog = slow_catalog(slow_reader(262_144, 0.06), receive_buffer=262_144)
    installed(url=catalog.url, call_timeout=DEADLINE)
    took, result = timed(lambda: lc.emit_edge("a.b.c", "d.e.f", pipeline="p" * 24_000_000))
    assert result is False
    assert took < DEADLINE + SLACK + 1.0, took


def test_a_name_that_resolves_slowly_costs_the_deadline_and_a_bounded_number_of_threads(
    slow_catalog, installed, monkeypatch
):
    # getaddrinfo takes no timeout. A resolver that does not answer cannot be made on
    # 127.0.0.1 without changing the machine's resolv.conf, so here (only) the lookup of one
    # name is made slow in the process; the resolver is the real one after the wait.
    release = threading.Event()
    real = socket.getaddrinfo

    def slow_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "slow-name.invalid":
            release.wait(WAIT)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    catalog = slow_catalog(silent)
    installed(url=f"http://slow-name.invalid:{catalog.port}", call_timeout=DEADLINE)

    def lookups() -> int:
        names = (thread.name for thread in threading.enumerate())
        return sum(name == "lineage-collector-lookup" for name in names)

    try:
        took, result = timed(lambda: lc.emit_edge("a.b.c", "d.e.f"))
        assert result is False
        assert took < DEADLINE + SLACK, took
        # The lookups left running are bounded: past them, a call fails at once.
        installed(url=f"http://slow-name.invalid:{catalog.port}", call_timeout=0.01)
        for _ in range(deadline_http.MAX_LOOKUPS_IN_FLIGHT + 3):
            assert lc.emit_edge("a.b.c", "d.e.f") is False
        assert lookups() == deadline_http.MAX_LOOKUPS_IN_FLIGHT
        with pytest.raises(OSError, match="lookups of the catalog's name still running"):
            deadline_http.post_json(f"http://slow-name.invalid:{catalog.port}", {}, None, 1.0)
    finally:
        release.set()


def test_an_answer_within_the_deadline_is_a_success(installed):
    # The bound is on the call, not a reason to give up early: a 200 after 0.1 s is True.
    catalog = SlowCatalog(trickle(STATUS + END[:-2], END[-2:], 0.1))  # the 200 after 0.2 s
    try:
        installed(url=catalog.url, call_timeout=1.0)
        assert lc.emit_edge("a.b.c", "d.e.f") is True
        assert lc.MetadataAPI().send(lc.MetadataModel(subject="alice", action="ran")) is True
    finally:
        catalog.close()


def test_uninstall_waits_for_a_stuck_worker_at_most_the_exit_flush_timeout(slow_catalog, installed):
    # stop_worker flushed for LINEAGE_EXIT_FLUSH_TIMEOUT and then joined the worker for as
    # long again: a worker stuck sending to a catalog that never answers (each read may
    # take LINEAGE_TIMEOUT, 10 s here) held uninstall(), and install() called again, 2.0 s.
    catalog = slow_catalog(silent)
    installed(url=catalog.url, timeout=10.0, exit_flush_timeout=1.0)
    with lc.job("stuck"):
        pass
    deadline = time.monotonic() + WAIT
    while not catalog.connections and time.monotonic() < deadline:
        time.sleep(0.01)  # until the worker is in its send
    assert catalog.connections
    took, _ = timed(lc.uninstall)
    assert took < 1.0 + SLACK, took

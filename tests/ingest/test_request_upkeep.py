"""The fast path's request upkeep (ingest/request_upkeep.py, ADR 0126): Django's request
signals' work without the signals while their receivers are Django's, the signals otherwise."""

import threading
import time
from typing import Any

import pytest
from django.core import signals
from django.core.cache import caches
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.urls import get_urlconf

from ingest import request_upkeep
from ingest.fastpath import IngestFastPath
from ingest.request_upkeep import RequestUpkeep, opened
from ingest.services import create_token
from tests.ingest.helpers import dumps, run_event
from tests.ingest.test_fastpath import call

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def app() -> IngestFastPath:
    return IngestFastPath(get_wsgi_application())


@pytest.fixture
def secret() -> str:
    return create_token("upkeep", "ingest")[1]


def _post(app: IngestFastPath, secret: str) -> int:
    status, _, _ = call(app, dumps(run_event()), HTTP_AUTHORIZATION=f"Bearer {secret}")
    return status


def _count_sends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    sent: list[str] = []
    for name in ("request_started", "request_finished"):
        signal = getattr(signals, name)
        monkeypatch.setattr(
            signal, "send", lambda *a, _s=signal.send, _n=name, **k: sent.append(_n) or _s(*a, **k)
        )
    return sent


def test_with_djangos_receivers_only_no_signal_is_sent(app, secret, monkeypatch) -> None:
    sent = _count_sends(monkeypatch)
    assert _post(app, secret) == 201
    assert sent == []


def test_another_receiver_gets_both_signals(app, secret, monkeypatch) -> None:
    sent = _count_sends(monkeypatch)
    heard: list[str] = []

    def started(**kwargs: Any) -> None:
        heard.append("started")

    def finished(**kwargs: Any) -> None:
        heard.append("finished")

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    try:
        assert _post(app, secret) == 201
    finally:
        signals.request_started.disconnect(started)
        signals.request_finished.disconnect(finished)
    assert heard == ["started", "finished"]
    assert sent == ["request_started", "request_finished"]
    assert _post(app, secret) == 201
    assert sent == ["request_started", "request_finished"]  # gone again: no signal


def test_a_connection_past_its_age_is_replaced_before_the_request(app, secret) -> None:
    assert _post(app, secret) == 201
    database = connections["default"]
    old = database.connection
    database.close_at = time.monotonic() - 1  # CONN_MAX_AGE passed
    assert _post(app, secret) == 201
    assert database.connection is not None and database.connection is not old
    assert old.closed


def test_a_connection_closed_after_each_request_is_closed_after_it(app, secret) -> None:
    database = connections["default"]
    kept = database.settings_dict["CONN_MAX_AGE"]
    database.close()
    database.settings_dict["CONN_MAX_AGE"] = 0
    try:
        assert _post(app, secret) == 201
        assert database.connection is None
    finally:
        database.settings_dict["CONN_MAX_AGE"] = kept


def test_the_query_log_starts_empty_with_each_request(app, secret) -> None:
    database = connections["default"]
    database.ensure_connection()
    database.queries_log.append({"sql": "from before", "time": "0"})
    assert _post(app, secret) == 201
    assert [query["sql"] for query in database.queries_log if query["sql"] == "from before"] == []


def test_the_fast_path_opens_no_cache_and_sets_no_urlconf(app, secret) -> None:
    """Why the upkeep leaves out close_caches and reset_urlconf: in a thread of its own,
    a fast-path request leaves neither a cache to close nor a URLconf to reset."""
    seen: dict[str, Any] = {}

    def serve() -> None:
        seen["status"] = _post(app, secret)
        seen["caches"] = caches.all(initialized_only=True)
        seen["urlconf"] = get_urlconf()
        connections.close_all()

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join()
    assert seen == {"status": 201, "caches": [], "urlconf": None}


def test_djangos_receivers_connected_again_in_another_order_still_send_nothing(
    app, secret, monkeypatch
) -> None:
    from django.db import close_old_connections

    signals.request_finished.disconnect(close_old_connections)  # as tests/api/test_openapi.py
    signals.request_finished.connect(close_old_connections)  # now last, not first
    sent = _count_sends(monkeypatch)
    assert _post(app, secret) == 201
    assert sent == []


def test_opened_answers_what_djangos_loop_does() -> None:
    """ADR 0136: the upkeep's one lookup finds what ``connections.all(initialized_only=True)``
    finds: none in a thread that opened nothing, the wrapper once it is made."""
    seen: dict[str, Any] = {}

    def serve() -> None:
        seen["before"] = (opened(), connections.all(initialized_only=True))
        connections["default"].ensure_connection()
        seen["after"] = (opened(), connections.all(initialized_only=True))
        connections.close_all()

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join()
    assert seen["before"] == ([], [])
    wrappers, djangos = seen["after"]
    assert len(wrappers) == 1 and wrappers == djangos


def test_the_upkeep_looks_the_wrappers_up_once_a_call(monkeypatch) -> None:
    """ADR 0136: Django's two functions reached the thread's storage twice per alias per
    call (six lookups a request); the upkeep once per call."""
    connections["default"].ensure_connection()
    storage_class = type(connections._connections)
    lookups: list[int] = []
    lookup = storage_class._get_storage

    def counted(self: Any) -> Any:
        lookups.append(1)
        return lookup(self)

    monkeypatch.setattr(storage_class, "_get_storage", counted)
    upkeep = RequestUpkeep(IngestFastPath)
    upkeep.started({})
    upkeep.finished()
    assert len(lookups) == 2
    # Without asgiref's lookup (another asgiref), Django's own functions, as before.
    monkeypatch.setattr(request_upkeep, "ONE_LOOKUP", False)
    lookups.clear()
    upkeep.started({})
    upkeep.finished()
    assert len(lookups) == 6

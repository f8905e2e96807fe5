"""The collector never hurts its host: catalog down, slow or failing; full queue; fork; exit."""

import logging
import multiprocessing
import os
import statistics
import subprocess
import sys
import textwrap
import threading
import time
import types

import lineage_collector as lc
import pytest
from fake_catalog_server import closed_port_url
from lineage_collector.config import Config
from lineage_collector.errors import counters
from lineage_collector.runtime import RUNTIME
from lineage_collector.transport import Sender


def test_batches_are_gzip_json_arrays_posted_with_the_bearer_token(catalog, installed):
    installed(url=catalog.url, api_key="lc_ingest_secret")
    with lc.job("shipped"):
        lc.add_output("s3://out/a/b.csv")
    assert lc.flush(5)
    (request,) = catalog.requests
    assert request["path"] == "/api/v1/lineage/batch"
    assert request["headers"]["Authorization"] == "Bearer lc_ingest_secret"
    assert request["headers"]["Content-Type"] == "application/json"
    assert [event["eventType"] for event in request["body"]] == ["START", "COMPLETE"]
    assert lc.stats()["events.sent"] == 2


def test_an_api_key_ending_in_a_newline_is_sent_and_a_broken_one_never_logged(
    catalog, installed, caplog
):
    # A key read from a secret file often ends in a newline: http.client refused the
    # header with an error quoting it, token included, which was logged once a minute
    # (and every event was lost).
    installed(url=catalog.url, api_key="lc_ingest_secret\n")
    with lc.job("keyed"):
        pass
    assert lc.flush(5)
    assert lc.emit_edge("a.b.c", "d.e.f")
    assert {request["headers"]["Authorization"] for request in catalog.requests} == {
        "Bearer lc_ingest_secret"
    }

    catalog.requests.clear()
    with caplog.at_level(logging.WARNING, logger="lineage_collector"):
        installed(url=catalog.url, api_key="lc_ingest_sec\nret")
        with lc.job("broken-key"):
            pass
        assert lc.flush(5) is False
        assert lc.emit_edge("a.b.c", "d.e.f") is False
    assert catalog.requests == []
    assert lc.stats()["errors.send"] >= 1 and lc.stats()["errors.emit_edge"] == 1
    assert "control character" in caplog.text
    assert "lc_ingest_sec" not in caplog.text


@pytest.mark.parametrize("mode", ["down", "slow", "error"])
def test_catalog_down_slow_or_failing_changes_neither_result_nor_latency(
    mode, catalog, installed, tmp_path
):
    sa = pytest.importorskip("sqlalchemy")
    catalog.mode = mode
    installed(url=closed_port_url() if mode == "down" else catalog.url, timeout=0.5)
    engine = sa.create_engine(f"sqlite:///{tmp_path}/db.sqlite")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE t (a int)")
        connection.exec_driver_sql("INSERT INTO t VALUES (1), (2)")

    @lc.job("query")
    def query() -> int:
        with engine.connect() as connection:
            return sum(row[0] for row in connection.exec_driver_sql("SELECT a FROM t"))

    durations = []
    for _ in range(30):
        started = time.perf_counter()
        assert query() == 3
        durations.append(time.perf_counter() - started)
        time.sleep(0.01)  # let the worker try (and fail) to send meanwhile
    # Never waiting on the catalog: a call that did would take the transport's 0.5 s
    # timeout (slow) or a connect attempt (down). A typical call stays sub-millisecond;
    # the worst is bounded under that timeout, since on a loaded machine one call in 30
    # can wait for a core, or for the GIL while the worker builds a batch (0.15 s at load 6,
    # over 0.25 s at load 11).
    assert statistics.median(durations) < 0.01, durations
    assert max(durations) < 0.45, durations
    started = time.perf_counter()
    assert lc.flush(0.3) is False
    assert time.perf_counter() - started < 1.0
    # The worker did try and fail. It may not have reached the catalog yet under load (a
    # fresh clone's suite at load 6 saw 88 items still queued after the flush's 0.3 s), so
    # flushes go on, bounded, until it has.
    deadline = time.monotonic() + 15
    while lc.stats().get("errors.send", 0) < 1 and time.monotonic() < deadline:
        lc.flush(0.3)
    assert lc.stats().get("errors.send", 0) >= 1, lc.stats()


def test_a_full_queue_drops_and_counts_instead_of_blocking(installed, monkeypatch):
    installed(queue_size=3)
    monkeypatch.setattr(RUNTIME, "start_worker", lambda: None)  # nobody drains the queue
    RUNTIME.needs_start = False
    with lc.job("flood"):
        for index in range(10):
            lc.add_output(f"s3://out/{index}/x.csv")
    assert len(RUNTIME.queue) == 3
    assert lc.stats()["queue.dropped"] == 9  # 10 outputs + the END, minus 2 free slots


def test_flush_is_false_when_lineage_was_lost_instead_of_sent(catalog, installed):
    # flush() is "True when all of it was" sent. With the catalog down for the whole
    # flush, the batch's three tries were spent within about a second, the batch was
    # dropped, and flush(5) then found nothing left and answered True; so with a refusal.
    installed(url=closed_port_url(), timeout=0.2)
    with lc.job("catalog-down"):
        pass
    assert lc.flush(5) is False
    assert lc.stats()["events.dropped_after_retries"] == 2
    assert lc.flush(1) is True  # nothing lost since: the answer is about this flush's span

    catalog.statuses = [400]
    installed(url=catalog.url)
    with lc.job("refused"):
        pass
    assert lc.flush(5) is False
    assert lc.stats()["events.rejected"] == 2
    with lc.job("stored"):
        pass
    assert lc.flush(5) is True
    assert [event["job"]["name"] for event in catalog.events()].count("stored") == 2

    installed(url=catalog.url, queue_size=1)
    with lc.job("overflowing"):  # START queued, END dropped: the queue holds one item
        pass
    assert lc.stats()["queue.dropped"] == 1
    assert lc.flush(5) is False


def test_strict_mode_raises_what_silent_mode_swallows(catalog, installed, monkeypatch):
    monkeypatch.setenv("LINEAGE_SILENT_FAIL", "false")
    catalog.mode = "error"
    installed(url=catalog.url)
    with lc.job("strict"):
        pass
    with pytest.raises(lc.CollectorError):
        lc.flush(2)


def test_disabled_collector_hooks_nothing_and_sends_nothing(catalog, installed, monkeypatch):
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    installed(url=catalog.url)
    with lc.job("off"):
        lc.add_output("s3://out/x/y.csv")
    assert lc.flush(0.5)
    assert catalog.requests == []


def test_the_circuit_opens_after_repeated_failures_and_stops_requests():
    calls = []

    class Failing:
        def send(self, events):
            calls.append(len(events))
            raise ConnectionError("down")

    sender = Sender(Failing(), Config(batch_size=1), counters)
    for index in range(20):
        sender.add({"index": index})
    now = time.monotonic()
    for step in range(200):
        sender.maybe_send(now + step * 0.5, force=True)  # 100 s of worker loops
    # 5 failures open the circuit for 30 s, then one trial per opening.
    assert len(calls) < 15
    assert counters.values["circuit.opened"] >= 1


def test_lineage_still_flows_from_a_forked_child(catalog, installed):
    installed(url=catalog.url)
    with lc.job("parent"):
        pass
    assert lc.flush(5)
    pid = os.fork()
    if pid == 0:  # the child: its own worker must be rebuilt from scratch
        code = 1
        try:
            with lc.job("child"):
                lc.add_output("s3://out/child/x.csv")
            code = 0 if lc.flush(5) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    child = [event for event in catalog.events() if event["job"]["name"] == "child"]
    assert [event["eventType"] for event in child] == ["START", "COMPLETE"]
    assert [event["job"]["name"] for event in catalog.events()].count("parent") == 2


@lc.job("pool-task")
def _pool_task(day: str) -> str:  # a Pool pickles what it runs: defined at module level
    lc.add_input(f"s3://raw/events/{day}/x.json")
    return day


def test_a_multiprocessing_child_flushes_its_lineage_when_it_exits(catalog, installed):
    # "exit flushes": a multiprocessing child started by fork ends with os._exit(), which
    # runs no atexit handler, so a job run as a Process target lost all its events, and
    # a Pool worker its last ones.
    installed(url=catalog.url, flush_interval=60)  # nothing goes out before an exit flush
    context = multiprocessing.get_context("fork")

    @lc.job("process-target")
    def target() -> None:
        lc.add_output("s3://out/child/x.csv")

    process = context.Process(target=target)
    process.start()
    process.join(30)
    assert process.exitcode == 0

    with context.Pool(1) as pool:
        assert pool.map(_pool_task, ["2026-12-06", "2026-12-07"]) == ["2026-12-06", "2026-12-07"]
        pool.close()
        pool.join()

    sent = [(event["job"]["name"], event["eventType"]) for event in catalog.events()]
    assert sent.count(("process-target", "START")) == 1
    assert sent.count(("process-target", "COMPLETE")) == 1
    assert sent.count(("pool-task", "COMPLETE")) == 2


def test_a_celery_prefork_child_flushes_its_lineage_when_it_exits(catalog, installed):
    # Celery's prefork pool runs tasks in billiard children, which end with os._exit()
    # (worker_max_tasks_per_child, shutdown): the last task's COMPLETE was lost. billiard 4
    # runs multiprocessing's exit finalizers, so the same one flushes there.
    billiard = pytest.importorskip("billiard")
    installed(url=catalog.url, flush_interval=60)

    @lc.job("last-task")
    def target() -> None:
        lc.add_output("s3://out/task/x.csv")

    process = billiard.get_context("fork").Process(target=target)
    process.start()
    process.join(30)
    assert process.exitcode == 0
    sent = [(event["job"]["name"], event["eventType"]) for event in catalog.events()]
    assert sent == [("last-task", "START"), ("last-task", "COMPLETE")]


def test_the_process_exits_promptly_when_the_catalog_hangs(catalog):
    catalog.mode = "slow"
    catalog.delay = 30
    script = textwrap.dedent(
        """
        import lineage_collector as lc
        lc.install()
        with lc.job("exiting"):
            lc.add_output("s3://out/x/y.csv")
        """
    )
    environment = {
        **os.environ,
        "OPENLINEAGE_URL": catalog.url,
        "LINEAGE_TIMEOUT": "20",
        "LINEAGE_EXIT_FLUSH_TIMEOUT": "0.5",
    }
    # The same start, imports and hooks with nothing to send: what the machine costs
    # whatever the collector does (seconds on a loaded machine).
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "import lineage_collector as lc\nlc.install()"],
        env=environment,
        check=True,
        timeout=20,
    )
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", script], env=environment, check=True, timeout=20)
    # The exit flush gives up after 0.5 s, not after the catalog's 30 s or the 20 s timeout.
    assert time.perf_counter() - started < baseline + 3


def test_emit_edge_posts_the_edge_and_answers_false_instead_of_raising(catalog, installed):
    installed(url=catalog.url, api_key="k")
    assert lc.emit_edge(
        "mlflow.Production.credit_risk",
        "iceberg.gold.predictions",
        "model_scoring",
        "dagster:score:42",
    )
    assert catalog.requests[-1]["path"] == "/api/v1/lineage/edges"
    assert catalog.requests[-1]["body"] == {
        "source_table": "mlflow.Production.credit_risk",
        "target_table": "iceberg.gold.predictions",
        "lineage_type": "model_scoring",
        "pipeline": "dagster:score:42",
    }
    catalog.mode = "error"
    assert lc.emit_edge("a.b.c", "d.e.f") is False
    installed(url=closed_port_url())
    assert lc.emit_edge("a.b.c", "d.e.f") is False


def test_metadata_api_posts_records_or_logs_them(catalog, installed, caplog):
    installed(url=catalog.url)
    record = lc.MetadataModel(
        subject="alice",
        action="approved",
        resource="model-7",
        additional_values={"stage": "Production"},
    )
    assert lc.MetadataAPI().send(record)
    assert catalog.requests[-1]["path"] == "/api/v1/metadata"
    assert catalog.requests[-1]["body"]["additionalValues"] == {"stage": "Production"}
    with caplog.at_level(logging.INFO, logger="lineage_collector.metadata"):
        assert lc.MetadataAPI("logging").send([record, record])
    assert caplog.text.count("approved") == 2
    catalog.mode = "error"
    assert lc.MetadataAPI().send(record) is False


class ThreadThatCannotStart(threading.Thread):
    def start(self) -> None:
        raise RuntimeError("can't start new thread")


def test_a_worker_that_cannot_start_fails_no_call_of_the_host(installed, monkeypatch, tmp_path):
    # The hooks start the worker on first use, after the host's statement succeeded: a
    # thread that cannot start (a process limit; interpreter shutdown on Python 3.12+)
    # raised out of set_job, and out of the SQLAlchemy and boto3 hooks as if the
    # statement had failed.
    sa = pytest.importorskip("sqlalchemy")
    engine = sa.create_engine(f"sqlite:///{tmp_path}/db.sqlite")
    installed()
    monkeypatch.setattr(
        "lineage_collector.runtime.threading",
        types.SimpleNamespace(Thread=ThreadThatCannotStart, Event=threading.Event),
    )
    run = lc.set_job("no-thread")
    RUNTIME.retry_start_at = 0.0  # the hook below tries again at once
    with engine.begin() as connection:
        assert connection.exec_driver_sql("SELECT 1").scalar() == 1
    lc.clear_job(run)
    assert lc.stats()["errors.worker.start"] == 2
    assert RUNTIME.needs_start  # tried again once threads can start


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "ten"])
def test_a_nonsense_setting_in_the_environment_does_not_make_install_raise(
    value, installed, monkeypatch
):
    # install() promises never to raise outside strict mode; Config.from_env runs before
    # its guard, and int(float("nan")) raised there.
    names = ("LINEAGE_QUEUE_SIZE", "LINEAGE_TIMEOUT", "LINEAGE_EXIT_FLUSH_TIMEOUT")
    for name in (*names, "LINEAGE_CALL_TIMEOUT"):
        monkeypatch.setenv(name, value)
    config = installed()
    assert (config.queue_size, config.timeout, config.exit_flush_timeout) == (10_000, 2.0, 2.0)
    assert config.call_timeout == 5.0


def test_metadata_api_answers_false_for_a_record_it_cannot_encode(catalog, installed):
    # "False instead of raising": the payload was built outside the guard, so a timestamp
    # given as a string raised AttributeError into the caller's success path.
    installed(url=catalog.url)
    record = lc.MetadataModel(subject="alice", action="approved", timestamp="2026-12-07")
    assert lc.MetadataAPI().send(record) is False
    assert catalog.requests == []


def test_after_reconfiguring_nothing_goes_to_the_old_transport(installed):
    # configure() stops the worker with a bounded join; a worker stuck in a slow send
    # outlived it, and once a new worker had started (clearing the shared stop flag) the
    # old one went on draining the new queue into the old transport (the old URL and key).
    release = threading.Event()

    class Stuck:
        def __init__(self) -> None:
            self.events: list[dict] = []

        def send(self, events):
            release.wait(10)
            self.events.extend(events)

    old, new = Stuck(), lc.transport.MemoryTransport()
    installed(transport=old, exit_flush_timeout=0.1)
    with lc.job("before"):
        pass
    deadline = time.monotonic() + 5
    while RUNTIME.queue and time.monotonic() < deadline:
        time.sleep(0.01)  # the worker has taken the batch and is stuck sending it
    installed(transport=new)
    for index in range(50):
        with lc.job(f"after-{index}"):
            pass
        if index == 0:
            release.set()
        time.sleep(0.002)
    assert lc.flush(5)
    time.sleep(0.3)  # the old worker's own flush interval, had it kept anything
    assert not [event for event in old.events if event["job"]["name"].startswith("after")]
    assert len(new.events) == 100


def test_disabled_sends_no_edge_and_no_metadata_record(catalog, installed, monkeypatch):
    # "OPENLINEAGE_DISABLED: nothing sent" held for events and edges; MetadataAPI posted
    # its records all the same.
    monkeypatch.setenv("OPENLINEAGE_DISABLED", "true")
    installed(url=catalog.url)
    assert lc.emit_edge("a.b.c", "d.e.f") is False
    assert lc.MetadataAPI().send(lc.MetadataModel(subject="alice", action="approved")) is False
    assert lc.emit_lineage(outputs=["s3://out/x/y.csv"], job_name="manual") is not None
    assert lc.flush(1)
    assert catalog.requests == []


def test_a_transport_that_fails_after_fork_leaves_the_child_without_lineage_not_broken(installed):
    # Python prints and drops an exception raised in a fork handler, leaving the rest of
    # it undone: the child kept the parent's processor (and its transport's connection).
    class Unforkable(lc.transport.MemoryTransport):
        def after_fork(self) -> None:
            raise OSError("cannot reopen")

    parent_transport = Unforkable()
    installed(transport=parent_transport)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with lc.job("child"):
                lc.add_output("s3://out/child/x.csv")
            lc.flush(1)
            sent_by_child = len(parent_transport.events)
            code = (
                0
                if (lc.stats()["errors.fork"], RUNTIME.active, sent_by_child) == (1, False, 0)
                else 3
            )
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_two_threads_that_both_saw_the_worker_missing_start_one(installed):
    # The hooks check needs_start and then call start_worker: two threads' first lineage
    # at once (a threaded server just started or forked) both passed the check, and each
    # started a worker on the same lock-free processor.
    installed()

    def workers() -> set[threading.Thread]:
        return {thread for thread in threading.enumerate() if thread.name == "lineage-collector"}

    before = workers()
    RUNTIME.start_worker()  # the first thread
    RUNTIME.start_worker()  # the second, which had seen needs_start before the first cleared it
    assert len(workers() - before) == 1


def test_events_waiting_for_a_catalog_that_is_down_are_bounded_and_counted():
    # Behind the queue, events the worker built wait for the catalog in the sender; while
    # it is down they must not pile up without bound either.
    from lineage_collector.transport import _MAX_PENDING

    class Down:
        def send(self, events):
            raise ConnectionError("down")

    counters.reset()
    sender = Sender(Down(), Config(), counters)
    for index in range(_MAX_PENDING + 5):
        sender.add({"index": index})
    assert len(sender.pending) == _MAX_PENDING
    assert sender.pending[0] == {"index": 5}  # the oldest went first
    assert counters.values["events.dropped"] == 5
    counters.reset()

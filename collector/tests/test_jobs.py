"""The job API: START/COMPLETE/FAIL, names, parents, upstream jobs and context isolation."""

import asyncio
import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import lineage_collector as lc
import lineage_collector.processor as processor_module
import pytest
from lineage_collector.hooks import celery as celery_hooks

SPEC = Path(__file__).resolve().parents[2] / "ingest" / "schemas"


def test_job_decorator_emits_start_then_complete_named_after_flow(captured):
    @lc.job("process-orders", flow="etl-pipeline")
    def process_orders():
        return 42

    assert process_orders() == 42
    events = captured.of("etl-pipeline.process-orders")
    assert [event["eventType"] for event in events] == ["START", "COMPLETE"]
    assert events[0]["run"]["runId"] == events[1]["run"]["runId"]
    parent = events[0]["run"]["facets"]["parent"]
    assert parent["job"] == {"namespace": "tests", "name": "etl-pipeline"}
    assert events[0]["job"]["namespace"] == "tests"


def test_jobs_of_one_flow_share_the_flow_parent_run(captured):
    with lc.job("extract", flow="nightly"):
        pass
    with lc.job("load", flow="nightly"):
        pass
    first = captured.complete("nightly.extract")["run"]["facets"]["parent"]["run"]["runId"]
    second = captured.complete("nightly.load")["run"]["facets"]["parent"]["run"]["runId"]
    assert first == second


def test_failing_job_emits_fail_with_message_and_reraises_the_same_exception(captured):
    error = ValueError("bad row 7")

    @lc.job("load")
    def load():
        raise error

    with pytest.raises(ValueError) as raised:
        load()
    assert raised.value is error
    (fail,) = captured.of("load", "FAIL")
    facet = fail["run"]["facets"]["errorMessage"]
    assert facet["message"] == "ValueError: bad row 7"
    assert facet["programmingLanguage"] == "PYTHON"
    assert "bad row 7" in facet["stackTrace"]
    assert not captured.of("load", "COMPLETE")


def test_nested_job_gets_the_enclosing_run_as_parent(captured):
    with lc.job("outer") as outer, lc.job("inner"):
        assert lc.current_job().name == "inner"
    assert lc.current_job() is None
    parent = captured.complete("inner")["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == outer.run_id
    assert parent["job"]["name"] == "outer"


def test_upstream_jobs_are_recorded_as_job_dependencies(captured):
    with lc.job("report", upstream_jobs=["extract", ("other-namespace", "load")]):
        pass
    facet = captured.complete("report")["run"]["facets"]["jobDependencies"]
    assert [item["job"] for item in facet["upstream"]] == [
        {"namespace": "tests", "name": "extract"},
        {"namespace": "other-namespace", "name": "load"},
    ]


def test_two_concurrent_asyncio_tasks_never_see_each_others_job(captured):
    seen: dict[str, list[str]] = {"a": [], "b": []}

    async def worker(label: str) -> None:
        async with lc.job(f"task-{label}"):
            for _ in range(5):
                seen[label].append(lc.current_job().name)
                await asyncio.sleep(0)

    @lc.job("async-decorated")
    async def decorated() -> str:
        await asyncio.sleep(0)
        return lc.current_job().name

    async def main() -> str:
        await asyncio.gather(worker("a"), worker("b"))
        return await decorated()

    assert asyncio.run(main()) == "async-decorated"
    assert set(seen["a"]) == {"task-a"}
    assert set(seen["b"]) == {"task-b"}
    assert captured.of("async-decorated", "COMPLETE")


def test_two_threads_never_see_each_others_job(captured):
    barrier = threading.Barrier(2)
    seen: dict[str, set[str]] = {}

    def worker(label: str) -> None:
        with lc.job(f"thread-{label}"):
            barrier.wait()
            seen[label] = {lc.current_job().name for _ in range(100)}
            lc.add_output(f"s3://bucket/{label}/file.csv")

    threads = [threading.Thread(target=worker, args=(label,)) for label in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": {"thread-a"}, "b": {"thread-b"}}
    assert captured.io("thread-a")[1] == {("s3://bucket", "a")}
    assert captured.io("thread-b")[1] == {("s3://bucket", "b")}


def test_propagate_and_submit_carry_the_job_into_pool_threads(captured):
    def write(part: int) -> str | None:
        lc.add_output(f"s3://out/part{part}/data.csv")
        job = lc.current_job()
        return job.name if job else None

    with lc.job("fan-out"), ThreadPoolExecutor(4) as pool:
        carried = list(pool.map(lc.propagate(write), range(3)))
        submitted = lc.submit(pool, write, 3).result()
        bare = pool.submit(lambda: lc.current_job()).result()
    assert carried == ["fan-out"] * 3
    assert submitted == "fan-out"
    assert bare is None
    assert captured.io("fan-out")[1] == {("s3://out", f"part{part}") for part in range(4)}


def test_set_job_and_clear_job_frame_a_request_like_middleware_does(captured):
    run = lc.set_job("GET /orders")
    lc.add_input(("postgres://db:5432", "shop.public.orders"))
    lc.clear_job(run)
    assert lc.current_job() is None
    inputs, _ = captured.io("GET /orders")
    assert inputs == {("postgres://db:5432", "shop.public.orders")}


def test_clear_job_with_an_error_emits_fail(captured):
    run = lc.set_job("POST /orders")
    lc.clear_job(run, error=RuntimeError("boom"))
    (fail,) = captured.of("POST /orders", "FAIL")
    assert fail["run"]["facets"]["errorMessage"]["message"] == "RuntimeError: boom"


def test_celery_headers_carry_the_parent_and_signals_run_the_task_as_a_job(captured):
    headers: dict = {}
    with lc.job("publisher") as publisher:
        celery_hooks._before_publish(headers=headers)
    assert lc.extract_parent(headers) == ("tests", "publisher", publisher.run_id)

    task = SimpleNamespace(
        name="tasks.resize", request=SimpleNamespace(lineage_parent=headers["lineage_parent"])
    )
    celery_hooks._prerun(task_id="t1", task=task)
    lc.add_output("s3://images/resized/a.png")
    celery_hooks._postrun(task_id="t1")
    event = captured.complete("tasks.resize")
    assert event["run"]["facets"]["parent"]["run"]["runId"] == publisher.run_id
    assert lc.current_job() is None

    celery_hooks._prerun(task_id="t2", task=task)
    celery_hooks._failure(task_id="t2", exception=KeyError("x"))
    celery_hooks._postrun(task_id="t2")
    assert captured.of("tasks.resize", "FAIL")


def test_add_input_outside_a_job_is_counted_not_raised(captured):
    lc.add_input("s3://bucket/orders/x.csv")
    assert lc.stats()["manual.outside_job"] == 1


def test_emit_lineage_without_a_job_emits_one_complete_event(captured):
    run_id = lc.emit_lineage(
        inputs=["s3://raw/orders/2026/11/29/a.json"],
        outputs=[("postgres://db:5432", "shop.public.orders")],
        job_name="manual-import",
    )
    event = captured.complete("manual-import")
    assert event["run"]["runId"] == run_id
    assert event["inputs"][0]["name"] == "orders"
    assert event["outputs"][0]["namespace"] == "postgres://db:5432"


def test_events_validate_against_the_openlineage_2_0_2_schema(captured):
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    if not SPEC.is_dir():
        pytest.skip("the spec schemas ship with the catalog (ingest/schemas)")
    core = json.loads((SPEC / "OpenLineage.json").read_text())
    facets = [json.loads(path.read_text()) for path in sorted((SPEC / "facets").glob("*.json"))]
    resources = [(doc["$id"], referencing.Resource.from_contents(doc)) for doc in [core, *facets]]
    registry = referencing.Registry().with_resources(resources)
    by_key = {key: doc for doc in facets for key in doc.get("properties", {})}

    @lc.job("validated", flow="flow", upstream_jobs=["up"])
    def failing():
        lc.add_input("s3://in/a/b.csv")
        raise OSError("disk")

    with pytest.raises(OSError):
        failing()
    events = captured.of("flow.validated")
    assert len(events) == 2
    for event in events:
        jsonschema.Draft202012Validator(core, registry=registry).validate(event)
        for key, value in {**event["run"]["facets"], **event["job"]["facets"]}.items():
            document = by_key[key]
            schema = {"$ref": document["properties"][key]["$ref"]}
            if schema["$ref"].startswith("#"):
                schema = {"$ref": document["$id"] + schema["$ref"]}
            jsonschema.Draft202012Validator(schema, registry=registry).validate(value)


def test_one_job_object_entered_by_two_threads_ends_each_threads_own_run(captured):
    # A module-level `LOAD = job("load")` used as `with LOAD:` in a threaded server: the
    # instance kept one stack of runs, so the thread that left first ended the run the
    # other had entered last, and that thread's later lineage missed its COMPLETE.
    load = lc.job("load")
    both_in, first_out = threading.Barrier(2), threading.Event()
    runs: dict[str, str] = {}

    def worker(label: str) -> None:
        if label == "b":
            time.sleep(0.05)  # b enters second: the top of the one stack
        with load as run:
            runs[label] = run.run_id
            both_in.wait()
            if label == "a":
                first_out.set()
                return
            first_out.wait()
            lc.add_output("s3://bucket/b-after-a-left/file.csv")

    threads = [threading.Thread(target=worker, args=(label,)) for label in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    completes = {event["run"]["runId"]: event for event in captured.of("load", "COMPLETE")}
    assert [item["name"] for item in completes[runs["b"]]["outputs"]] == ["b-after-a-left"]
    assert completes[runs["a"]]["outputs"] == []
    assert captured.of("load", "OTHER") == []


def test_a_fail_event_carries_no_password_from_the_error_or_its_stack(captured):
    @lc.job("connect")
    def connect():
        dsn = "postgresql+psycopg://etl:hunter2@db:5432/shop"  # quoted by the traceback
        raise ConnectionError(f"cannot reach {dsn}")

    with pytest.raises(ConnectionError):
        connect()
    (event,) = captured.of("connect", "FAIL")
    facet = event["run"]["facets"]["errorMessage"]
    assert "hunter2" not in facet["message"] + facet["stackTrace"]
    assert "postgresql+psycopg://***@db:5432/shop" in facet["message"]


@pytest.mark.parametrize(
    ("url", "secret", "redacted"),
    [
        # An AWS secret key is base64 and often holds a "/": the user info was taken to end
        # there, and the key and the secret were sent in the FAIL event.
        (
            "s3n://AKIAEXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY@raw/x",
            ("AKIAEXAMPLE", "wJalrXUtnFEMI", "bPxRfiCYEXAMPLEKEY"),
            "s3n://***@raw/x",
        ),
        # An "@" in a password that was not percent-encoded: the part after it was kept.
        ("postgresql://etl:hunt@er2@db/shop", ("hunt", "er2"), "postgresql://***@db/shop"),
    ],
)
def test_a_fail_event_carries_no_password_with_a_slash_or_an_at_sign(
    url, secret, redacted, captured
):
    @lc.job("connect-odd")
    def connect():
        raise ConnectionError(f"cannot reach {url} (from the settings)")

    with pytest.raises(ConnectionError):
        connect()
    (event,) = captured.of("connect-odd", "FAIL")
    facet = event["run"]["facets"]["errorMessage"]
    for part in secret:
        assert part not in facet["message"] + facet["stackTrace"]
    assert f"cannot reach {redacted} (from the settings)" in facet["message"]


def test_a_huge_error_message_is_capped_like_the_stack(captured):
    @lc.job("huge-error")
    def fail():
        raise ValueError("x" * 10_000_000)

    with pytest.raises(ValueError):
        fail()
    (event,) = captured.of("huge-error", "FAIL")
    assert len(json.dumps(event)) < 50_000


def test_a_run_with_long_dataset_names_keeps_its_complete_under_the_catalogs_limit(captured):
    # 10,000 names per direction keep a COMPLETE "well under the catalog's 8 MiB" only
    # when names are short: S3 prefixes run to 1,024 characters, and 9,000 of 950 made an
    # event of 8.9 MB, which the catalog refuses whole (the run's lineage lost with it).
    folder = "exports/" + "x" * 940
    with lc.job("long-names"):
        for index in range(9_000):
            lc.add_output(f"s3://out/{folder}{index:04d}/report.csv")
            lc.add_input(f"s3://raw/{folder}{index:04d}/source.csv")
    event = captured.complete("long-names")
    size = len(json.dumps(event, separators=(",", ":")))
    assert size < 8 * 1024 * 1024 - 1024 * 1024, size  # a MiB to spare
    kept = len(event["outputs"])
    assert 3_000 < kept < 9_000
    assert len(event["inputs"]) == kept  # the same size of name each way
    assert lc.stats()["datasets.dropped"] == 2 * (9_000 - kept)


def test_a_long_lived_run_keeps_a_bounded_number_of_datasets(captured, monkeypatch):
    # A consumer's run that lasts the whole process and writes a folder per message
    # collected one name per folder for its COMPLETE: the worker's memory grew without
    # bound, and the COMPLETE outgrew what the catalog accepts for one event.
    monkeypatch.setattr(processor_module, "_MAX_RUN_DATASETS", 50)
    run = lc.set_job("consumer")
    for index in range(80):
        lc.add_output(f"s3://out/exports/{index:05d}/report.csv")
        lc.add_output("s3://out/exports/00000/report.csv")  # known names are never dropped
    lc.add_input("s3://in/requests/x.json")
    lc.clear_job(run)
    (event,) = captured.of("consumer", "COMPLETE")
    assert len(event["outputs"]) == 50
    assert [item["name"] for item in event["inputs"]] == ["requests"]
    assert lc.stats()["datasets.dropped"] == 30


def test_all_open_runs_together_keep_a_bounded_number_of_datasets(captured, monkeypatch):
    monkeypatch.setattr(processor_module, "_MAX_TRACKED_DATASETS", 30)
    first = lc.set_job("first")
    for index in range(20):
        lc.add_output(f"s3://out/first/{index:05d}/x.csv")
    with lc.job("second"):
        for index in range(20):
            lc.add_output(f"s3://out/second/{index:05d}/x.csv")
    lc.clear_job(first)
    with lc.job("third"):  # the ended runs gave their room back
        for index in range(20):
            lc.add_output(f"s3://out/third/{index:05d}/x.csv")
    outputs = {
        name: len(captured.complete(name)["outputs"]) for name in ("first", "second", "third")
    }
    assert outputs == {"first": 20, "second": 10, "third": 20}
    assert lc.stats()["datasets.dropped"] == 10


@pytest.mark.parametrize(("code", "event_type"), [(0, "COMPLETE"), (None, "COMPLETE"), (2, "FAIL")])
def test_sys_exit_inside_a_job_fails_it_only_with_a_failing_code(code, event_type, captured):
    # A script's `@job` main that ends with sys.exit(0) succeeded; it was reported as
    # FAIL with "SystemExit: 0".
    @lc.job("script")
    def main():
        sys.exit(code)

    with pytest.raises(SystemExit):
        main()
    with pytest.raises(SystemExit), lc.job("block"):
        sys.exit(code)
    assert [event["eventType"] for event in captured.of("script")] == ["START", event_type]
    assert [event["eventType"] for event in captured.of("block")] == ["START", event_type]


def test_emit_lineage_takes_a_single_uri_like_add_input_does(captured):
    # list("s3://raw/x/") is a list of characters: a lone string gave no event at all.
    assert lc.emit_lineage("s3://raw/events/", "s3://out/daily/", job_name="single")
    inputs, outputs = captured.io("single")
    assert (inputs, outputs) == ({("s3://raw", "events")}, {("s3://out", "daily")})


def test_keys_in_an_s3_uri_with_a_slash_in_the_secret_never_reach_an_event(captured):
    # README: "A connection's user and password are never part of a name, whether it comes
    # from an engine or from a URI given to add_input/add_output/emit_lineage".
    uri = "s3n://AKIAEXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY@raw/events/2026/x.json"
    with lc.job("keyed"):
        lc.add_output(uri)
    lc.emit_lineage(inputs=uri, job_name="keyed-import")
    assert captured.io("keyed")[1] == {("s3://raw", "events")}
    text = json.dumps(captured.events)
    assert "AKIAEXAMPLE" not in text and "wJalrXUtnFEMI" not in text and "K7MDENG" not in text

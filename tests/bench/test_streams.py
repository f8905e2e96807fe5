"""bench/streams.py's ``declared`` stream (issue 26): deterministic by chunk, with JobEvents
that redeclare jobs and run facts on every COMPLETE, all valid events."""

from bench.streams import declared, records


def test_the_declared_stream_is_the_same_whatever_the_chunking() -> None:
    assert declared(0, 300) + declared(300, 300) == declared(0, 600)


def test_the_declared_stream_carries_job_events_and_run_facts() -> None:
    events = declared(0, 3000)
    job_events = [event for event in events if "run" not in event]
    # Every tenth "hour" of the 50 jobs' schedule is a deploy: one JobEvent per job then.
    assert len(job_events) == 100
    declared_inputs = {
        tuple(item["name"] for item in event["inputs"])
        for event in job_events
        if event["job"]["name"] == "etl.0"
    }
    assert declared_inputs == {("src.orders_0", "ref/dim_0_v0"), ("src.orders_0", "ref/dim_0_v1")}
    assert all("columnLineage" in event["outputs"][0]["facets"] for event in job_events)
    completes = [event for event in events if event.get("eventType") == "COMPLETE"]
    assert all("outputStatistics" in event["outputs"][0]["outputFacets"] for event in completes)
    assert len(records("declared", 0, 300)) == 300

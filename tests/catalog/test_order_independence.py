"""Invariant 3: any permutation, duplication and batching of the events gives one catalog."""

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from catalog.models import JobLineageEdge, LineageEdge, Run
from catalog.models.writes import write_sql
from catalog.services.derive import derive_events, derived_tables
from ingest.models import Event
from ingest.services import record_events
from tests.api.project_fixtures import flink_snapshots
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import canonical_dump, corpus_records, edge, openlineage
from tests.conftest import CORPUS
from tests.strategies import (
    planned_and_completed_events,
    run_state_events,
    static_and_run_fact_events,
)

FIDELITY = Path(__file__).resolve().parents[1] / "fixtures" / "fidelity"
PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "openlineage" / "project"

pytestmark = pytest.mark.django_db

RUN_A, RUN_B, RUN_C, RUN_D, RUN_E = (str(uuid.UUID(int=n)) for n in (1, 2, 3, 6, 7))


def _synthetic() -> list:
    """Late starts, merges from both sides, a rename, edges: the order-sensitive cases."""
    table = {"namespace": "hive://m:9083", "name": "db.t", "type": "TABLE"}
    other = {"namespace": "s3://other", "name": "t", "type": "LOCATION"}
    parent = {"parent": facet(run={"runId": RUN_C}, job={"namespace": "x", "name": "parent"})}
    events = [
        run_event("START", 0, RUN_A, inputs=[dataset("s3://in", "a")], run_facets=parent),
        run_event(
            "COMPLETE",
            10,
            RUN_A,
            outputs=[dataset("s3://lake", "t", symlinks=facet(identifiers=[table]))],
        ),
        run_event("RUNNING", 20, RUN_A, run_facets={"x": {"v": 1}}),
        run_event("START", 5, RUN_B, job=("ns", "two"), inputs=[dataset("hive://m", "db.t")]),
        run_event(
            "FAIL",
            9,
            RUN_B,
            job=("ns", "two"),
            outputs=[dataset("s3://out", "z")],
            run_facets={"errorMessage": facet(message="boom", programmingLanguage="py")},
        ),
        run_event("COMPLETE", 9, RUN_B, job=("ns", "two")),
        run_event("COMPLETE", 30, RUN_C, job=("x", "parent")),
        run_event(
            "COMPLETE",
            40,
            str(uuid.UUID(int=4)),
            job=("ns", "three"),
            outputs=[
                dataset(
                    "s3://other",
                    "t",
                    symlinks=facet(identifiers=[table]),
                    lifecycleStateChange=facet(
                        lifecycleStateChange="RENAME",
                        previousIdentifier={"namespace": "s3://old", "name": "t"},
                    ),
                )
            ],
        ),
        run_event(
            "COMPLETE",
            50,
            str(uuid.UUID(int=5)),
            job=("ns", "four"),
            inputs=[dataset("s3://in", "a", symlinks=facet(identifiers=[other]))],
            outputs=[dataset("s3://out", "z")],
        ),
    ]
    records = [openlineage(event) for event in events]
    # Issue 12's shapes: facet defects, jobs that only read or write, a shared runId, a
    # Hive table stored under a warehouse path (tests/fixtures/fidelity/README.md).
    records += [
        openlineage(orjson.loads(path.read_bytes())) for path in sorted(FIDELITY.glob("*.json"))
    ]
    records.append(
        edge({"source_table": "a.b.c", "target_table": "d.e.f", "pipeline": "dagster:j:1"})
    )
    # Issue 26's shapes: inputs named only by column lineage (dbt-ol's default mode), then
    # listed by a later event of the same run; dataset-level dependencies, both
    # transformation forms; a later run that drops a column-lineage input.
    for path in sorted((CORPUS / "written").glob("*.json")):
        document = orjson.loads(path.read_bytes())
        records += (
            [openlineage(event) for event in document]
            if isinstance(document, list)
            else [openlineage(document)]
        )
    lineage = facet(
        fields={"who": {"inputFields": [{"namespace": "pg", "name": "people", "field": "name"}]}}
    )
    records += [
        openlineage(event)
        for event in (
            run_event(
                "START",
                60,
                RUN_D,
                job=("ns", "cl"),
                outputs=[dataset("pg", "report", columnLineage=lineage)],
            ),
            run_event("COMPLETE", 61, RUN_D, job=("ns", "cl"), inputs=[dataset("pg", "people")]),
            run_event("COMPLETE", 70, RUN_E, job=("ns", "cl"), outputs=[dataset("pg", "report")]),
        )
    ]
    # Issue 26's shapes too: static lineage (two JobEvents of one job: the newer replaces the
    # older whatever the order), DatasetEvents, run facts (tests/fixtures/openlineage/project).
    records += [openlineage(event) for event in _static_and_run_facts()]
    # Issue 41's snapshot stream: a COMPLETE_SNAPSHOT run whose column lineage is its
    # newest window's, beside the accumulating Flink run of the same job above.
    records += [openlineage(event) for event in flink_snapshots()]
    return records


def _static_and_run_facts() -> list[dict]:
    events = [orjson.loads(path.read_bytes()) for path in sorted(PROJECT.glob("*.json"))]
    described = orjson.loads((PROJECT / "dataset_event_customers.json").read_bytes())
    described["eventTime"] = "2026-03-03T09:00:00Z"
    described["dataset"]["facets"]["documentation"]["description"] = "later"
    statistics = orjson.loads((PROJECT / "run_output_statistics.json").read_bytes())
    statistics["eventType"] = "RUNNING"
    statistics["eventTime"] = "2026-03-01T10:00:00Z"
    statistics["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] = 17
    # Same eventTime as the v2 declaration: the digest decides, in any order.
    tie = orjson.loads((PROJECT / "job_event_orders_v2.json").read_bytes())
    tie["outputs"].append({"namespace": "postgres://warehouse:5432", "name": "shop.tie"})
    return [*events, described, statistics, tie]


def _stream() -> list:
    corpus = corpus_records(CORPUS) if CORPUS.is_dir() else []
    return _synthetic() + corpus[:60]


# Built at import (a few milliseconds): the property's strategies and explicit examples
# need its length, and every example derives the same stream.
STREAM = _stream()
N = len(STREAM)
SYNTHETIC = len(_synthetic())  # the order-sensitive shapes come first in the stream


@pytest.fixture
def stream_reference() -> Callable[[], dict]:
    """The stream derived in order in one batch, derived once per test instead of once per
    example: the stream is the module's, the same in every example, and a canonical dump
    holds natural keys only, no ids, so the dump of an earlier example is this one's too.
    It is derived inside the test's transaction, at the first example, so it is a catalog
    of the same database the examples derive into, and nothing of it outlives the test."""
    references: list[dict] = []

    def reference() -> dict:
        if not references:
            with rolled_back():
                references.append(_derive(STREAM, list(range(N)), [N], []))
        return references[0]

    return reference


@contextmanager
def rolled_back() -> Iterator[None]:
    """A block whose writes are undone at its end (a savepoint rolled back), around each
    derivation of the stream: the next one starts from the empty catalog the block
    started from. _reset alone (DELETE) leaves every deleted row behind, dead but not yet
    removable, until the test's transaction ends, and each later derivation's scans step
    over all of them: the stream derived eight times in one test took its PostgreSQL
    backend 1.0 s of CPU the first time and 1.7 s the eighth, and 1.1-1.3 s each time
    in these blocks (rows that a rolled-back savepoint wrote are dead to every
    transaction, so PostgreSQL prunes them)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def _reset() -> None:
    with connection.cursor() as cursor:
        for table in derived_tables():
            cursor.execute(f"DELETE FROM {table}")
    Event.objects.all().delete()


def _derive(records: list, order: list[int], batches: list[int], duplicates: list[int]) -> dict:
    _reset()
    ids = [stored.id for stored in record_events([records[index] for index in order])]
    position = 0
    sizes = iter(batches)
    while position < len(ids):
        size = next(sizes, 7)
        derive_events(ids[position : position + size])
        position += size
    for index in duplicates:  # redelivery of an event derived before: derived once more
        Event.objects.filter(id=ids[index % len(ids)]).update(derivation_status="pending")
        derive_events([ids[index % len(ids)]])
    return canonical_dump()


# Ten random arrangements and three chosen ones, where there were thirty random ones (each
# example derives the whole stream, two to three CPU seconds): the chosen ones are those
# random draws reach only by luck. Reversed, so every later event of a run (a COMPLETE, a
# rename, a redefinition) arrives before the earlier ones, once in a single batch (the
# batch's own ordering) and once with each order-sensitive event in a batch of its own
# (each late START, merge and rename derived over a catalog that already holds what comes
# after it), redelivering the synthetic events; and the even events before the odd ones in
# batches of 40, so the events of one run land in different batches out of order.
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(order=list(range(N))[::-1], batches=[N], duplicates=[])
@example(
    order=list(range(N))[::-1],
    batches=[N - SYNTHETIC] + [1] * SYNTHETIC,
    duplicates=list(range(N - SYNTHETIC, N, 5)),  # positions of the synthetic events
)
@example(order=list(range(0, N, 2)) + list(range(1, N, 2)), batches=[40] * 4, duplicates=[0, 1])
@given(
    order=st.permutations(range(N)),
    batches=st.lists(st.integers(1, 40), max_size=20),
    duplicates=st.lists(st.integers(0, N - 1), max_size=10),
)
def test_any_permutation_duplication_and_batching_gives_the_same_catalog(
    stream_reference, order, batches, duplicates
) -> None:
    """Derived in any order, batching and redelivery, the stream gives the catalog it gives
    derived in order in one batch (compared by the canonical dump, natural keys only)."""
    with rolled_back():
        derived = _derive(STREAM, list(order), batches, duplicates)
    assert derived == stream_reference()


def test_a_full_rederive_empties_every_derived_table_and_keeps_steward_input() -> None:
    tables = set(derived_tables())
    assert "catalog_alias_rule" not in tables  # steward input survives a rebuild
    # Every other catalog table is derived, including ones nobody listed by hand.
    assert {"catalog_job", "catalog_dataset_alias", "catalog_column_lineage_fact"} <= tables
    assert all(table.startswith("catalog_") for table in tables)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(events=static_and_run_fact_events, data=st.data())
def test_static_lineage_dataset_events_and_run_facts_are_order_independent(events, data) -> None:
    records = [openlineage(event) for event in events]
    reference = _derive(records, list(range(len(records))), [len(records)], [])
    order = data.draw(st.permutations(range(len(records))))
    batches = data.draw(st.lists(st.integers(1, 4), max_size=6))
    assert _derive(records, list(order), batches, []) == reference


def _completed_counts_match_the_runs() -> None:
    """Each edge's completed count is the number of its runs that wrote it (ADR 0069), each
    (edge, run) row's flag the rule of catalog.models.writes over the run's rows of the dataset."""
    for edges, edge_runs, target, direction in (
        ("catalog_lineage_edge", "catalog_lineage_edge_run", "e.target_id", "'output'"),
        ("catalog_job_edge", "catalog_job_edge_run", "e.dataset_id", "e.direction"),
    ):
        wrote = f"""EXISTS (SELECT 1 FROM catalog_run_dataset rd
            JOIN catalog_dataset_alias a ON a.id = rd.alias_id
            WHERE rd.run_id = r.id AND a.dataset_id = {target} AND rd.direction = {direction}
              AND {write_sql("r", "rd")})"""
        with connection.cursor() as cursor:
            cursor.execute(
                f"""SELECT e.id, e.run_count, e.completed_run_count, COUNT(er.run_id),
                           COUNT(er.run_id) FILTER (WHERE er.completed),
                           COUNT(er.run_id) FILTER (WHERE er.completed <> {wrote})
                    FROM {edges} e JOIN {edge_runs} er ON er.edge_id = e.id
                    JOIN catalog_run r ON r.id = er.run_id GROUP BY e.id"""
            )
            for edge_id, runs, completed, *expected, wrong in cursor.fetchall():
                assert (runs, completed, wrong) == (*expected, 0), (edges, edge_id)


def _writes_match_the_events(events: list[dict]) -> None:
    """The completed counts recomputed from the events themselves (one task, no streaming):
    a completed run wrote the outputs its COMPLETE events named, or all its outputs when
    they named none, and read its inputs."""
    read, listed, named = defaultdict(set), defaultdict(set), defaultdict(set)
    for event in events:
        run = event["run"]["runId"]
        read[run] |= {item["name"] for item in event.get("inputs") or []}
        outputs = {item["name"] for item in event.get("outputs") or []}
        listed[run] |= outputs
        if event["eventType"] == "COMPLETE":
            named[run] |= outputs
    job_edges: Counter = Counter()
    lineage_edges: Counter = Counter()
    for run in Run.objects.filter(state="COMPLETE"):
        wrote = named[str(run.run_uuid)] or listed[str(run.run_uuid)]
        job_edges.update((name, "input") for name in read[str(run.run_uuid)])
        job_edges.update((name, "output") for name in wrote)
        lineage_edges.update((i, o) for i in read[str(run.run_uuid)] for o in wrote)
    shown = {
        (edge.dataset.name, edge.direction): edge.completed_run_count
        for edge in JobLineageEdge.objects.select_related("dataset")
        if edge.completed_run_count
    }
    assert shown == dict(job_edges)
    shown = {
        (edge.source.name, edge.target.name): edge.completed_run_count
        for edge in LineageEdge.objects.select_related("source", "target")
        if edge.completed_run_count
    }
    assert shown == dict(lineage_edges)


def _writes_the_same_in_any_order(
    events: list, order: list[int], batches: list[int], duplicates: list[int]
) -> None:
    """Derived in order, then in the given order, batching and duplication: the same state,
    and both times the completed counts and the writes the events' oracle gives."""
    # Hypothesis shows a composite's draw as blank ("case=,"): the case, should it fail.
    note(repr((events, order, batches, duplicates)))
    records = [openlineage(event) for event in events]
    reference = _derive(records, list(range(len(records))), [len(records)], [])
    _completed_counts_match_the_runs()
    _writes_match_the_events(events)
    assert _derive(records, order, batches, duplicates) == reference
    _completed_counts_match_the_runs()
    _writes_match_the_events(events)


@st.composite
def _arranged(draw: st.DrawFn, events: st.SearchStrategy) -> tuple:
    """Events, a drawn order, small batches (so a run's events, its START with datasets, its
    bare FAIL or its COMPLETE naming fewer outputs, usually land in different ones) and a
    few redeliveries; one strategy, so explicit examples can name all four."""
    drawn = draw(events)
    order = draw(st.permutations(range(len(drawn))))
    batches = draw(st.lists(st.integers(1, 3), min_size=2, max_size=6))
    duplicates = draw(st.lists(st.integers(0, len(drawn) - 1), max_size=3))
    return drawn, list(order), batches, duplicates


def _state(run: int, state: str, minute: int, reads: int | None, writes: int | None) -> dict:
    """A run-state event of tests.strategies' shape; None for no datasets (a bare event)."""
    from tests.strategies import _DATASETS, _STATE_RUNS, _state_event

    inputs = [] if reads is None else [_DATASETS[reads]]
    outputs = [] if writes is None else [_DATASETS[writes]]
    return _state_event(_STATE_RUNS[run], state, minute, inputs, outputs, False)


# Twelve random cases where there were twenty-five, and the three the docstring names,
# chosen, each with its later event first and in a batch of its own.
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(  # a FAIL before its START, each alone, the START redelivered
    case=([_state(0, "START", 1, 0, 1), _state(0, "FAIL", 2, None, None)], [1, 0], [1, 1], [1])
)
@example(  # a COMPLETE after another run's FAIL of the same table
    case=(
        [_state(0, "START", 1, 0, 1), _state(1, "FAIL", 2, 0, 1), _state(0, "COMPLETE", 3, 0, 1)],
        [1, 2, 0],
        [1, 1, 1],
        [],
    )
)
@example(  # terminal events without datasets: a bare COMPLETE and a bare ABORT, first
    case=(
        [
            _state(0, "START", 1, 0, 1),
            _state(0, "COMPLETE", 2, None, None),
            _state(1, "START", 1, 2, 1),
            _state(1, "ABORT", 3, None, None),
        ],
        [3, 1, 2, 0],
        [1, 1, 2],
        [0],
    )
)
@given(case=_arranged(run_state_events))
def test_which_runs_count_as_writes_is_order_independent(case) -> None:
    """A FAIL before its START, a COMPLETE after another run's FAIL, a terminal event
    without datasets: the completed counts are the same in any order and batching."""
    _writes_the_same_in_any_order(*case)


def _planned(run: int, state: str, outputs: list[int] | None) -> dict:
    """A START or end event of planned_and_completed_events' shape; None: no outputs key."""
    from tests.strategies import _DATASETS, _STATE_RUNS, _state_event

    event = _state_event(
        _STATE_RUNS[run], state, 1, [_DATASETS[3]], [_DATASETS[i] for i in outputs or []], False
    )
    if outputs is None:
        del event["outputs"]
    return event


# Twelve random cases where there were thirty, and the shapes of issue 31 chosen, each
# with the COMPLETE first, in a batch of its own.
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(  # a START planning three outputs, its COMPLETE naming one, a RUNNING naming two
    case=(
        [
            _planned(0, "START", [0, 1, 2]),
            _planned(0, "COMPLETE", [1]),
            _planned(0, "RUNNING", [0, 2]),
        ],
        [1, 2, 0],
        [1, 1, 1],
        [1],
    )
)
@example(  # COMPLETEs naming none: `outputs: []` and no key; another run FAILs
    case=(
        [
            _planned(0, "START", [0, 1]),
            _planned(0, "COMPLETE", []),
            _planned(1, "START", [1, 2]),
            _planned(1, "COMPLETE", None),
            _planned(2, "START", [0]),
            _planned(2, "FAIL", [0]),
        ],
        [5, 3, 1, 4, 2, 0],
        [1, 1, 1, 3],
        [0],
    )
)
@given(case=_arranged(planned_and_completed_events()))
def test_a_start_planning_more_than_its_complete_names_is_order_independent(case) -> None:
    """A START listing more outputs than its COMPLETE names (or a COMPLETE naming none),
    in any order and batching: the same writes, those the COMPLETE named (issue 31)."""
    _writes_the_same_in_any_order(*case)


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 2, 0]])
def test_a_bare_terminal_event_in_a_later_batch_recounts_the_run(order) -> None:
    """The case the property above seldom draws (it failed before the batch re-counted
    every run with events, not only those naming datasets): the START lists the datasets,
    the COMPLETE arrives alone, another run of the job FAILs, one batch each."""
    from tests.strategies import _DATASETS, _STATE_RUNS, _state_event

    events = [
        _state_event(_STATE_RUNS[0], "START", 1, [_DATASETS[0]], [_DATASETS[1]], False),
        _state_event(_STATE_RUNS[0], "COMPLETE", 2, [], [], True),
        _state_event(_STATE_RUNS[1], "FAIL", 3, [_DATASETS[0]], [_DATASETS[1]], False),
    ]
    records = [openlineage(event) for event in events]
    reference = _derive(records, [0, 1, 2], [3], [])
    assert _derive(records, order, [1, 1, 1], []) == reference
    _completed_counts_match_the_runs()
    # (run count, completed run count) of the one dataset → dataset edge
    assert [(edge[6], edge[7]) for edge in reference["edges"]] == [(2, 1)]


def test_an_edge_stopped_change_does_not_depend_on_the_arrival_order() -> None:
    """A case the START-planning property drew on 2026-12-03: three runs of one task, each
    a START planning `t0` (the third also t1 and t2, reading t0) and a COMPLETE with no
    outputs key. Derived in order in one batch, the change log holds the third run's edges
    stopped by the second. Derived as [3, 4, 2, 1, 5, 0] in batches of 3 and 2 it held
    none: the first run, placed by its COMPLETE between them, moved back before both when
    its START came last, and the run that had followed it (no change named it) was not
    recomputed. The batch now recomputes the run after the start a run left (ADR 0088)."""
    from tests.strategies import _DATASETS, _STATE_RUNS, _state_event

    t0, t1, t2 = _DATASETS[:3]
    events = []
    for run, minute, end, inputs, planned in (
        (0, 1, 3, [], [t0]),
        (1, 4, 4, [], [t0]),
        (2, 2, 2, [t0], [t0, t1, t2]),
    ):
        events.append(_state_event(_STATE_RUNS[run], "START", minute, inputs, planned, False))
        complete = _state_event(_STATE_RUNS[run], "COMPLETE", end, inputs, [], False)
        del complete["outputs"]
        events.append(complete)
    records = [openlineage(event) for event in events]
    reference = _derive(records, list(range(6)), [6], [])
    # (kind, run, previous run) of each change: t0's three downstream edges, stopped.
    assert [(c[0], c[10], c[11]) for c in reference["changes"]] == [
        ("edge_stopped", str(uuid.UUID(_STATE_RUNS[1])), str(uuid.UUID(_STATE_RUNS[2])))
    ] * 3
    assert _derive(records, [3, 4, 2, 1, 5, 0], [3, 2], []) == reference


@pytest.mark.parametrize("order", [[2, 1, 0], [2, 0, 1], [0, 2, 1]])
def test_a_snapshot_runs_column_lineage_is_the_same_in_any_order(order) -> None:
    """A late older window changes nothing: the newest window's column edges, one batch
    per event, the newest first, redelivered (ADR 0091)."""
    records = [openlineage(event) for event in flink_snapshots()]
    reference = _derive(records, [0, 1, 2], [3], [])
    assert {(edge[0][1], edge[1]) for edge in reference["column_edges"]} == {
        ("io.openlineage.flink.kafka.input2", "id"),
        ("io.openlineage.flink.kafka.input2", "version"),
    }
    assert _derive(records, order, [1, 1, 1], [order[0]]) == reference

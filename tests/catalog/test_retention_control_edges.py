"""Control edges survive retention and purge (ADR 0090, ADR 0079): a rederive after
retention draws every control edge the catalog showed, with its first and last seen and
the newest stating event's rules, and a purge takes what retention kept of a namespace's
and every event whose run depends on one of its jobs.

The store: ``etl.load`` states extract → load and load → report in old runs (received 40
days ago) and extract → load again, with other rules, in a new run; ``etl.audit`` states
``ops/gate`` → audit in an old run only, so ``ops/gate`` is a job no kept event names.
"""

from typing import Any

import pytest
from django.db.models import Q

from catalog.models import ControlEdge, Job, RetainedControlEdge, RetainedJob
from catalog.services.derive import derive_events, rederive
from catalog.services.purge import purge_namespace
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.conftest import facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.catalog.test_retention import _age

pytestmark = pytest.mark.django_db

NS = "airflow://prod"


def _on(namespace: str, name: str, **rules: str) -> dict[str, Any]:
    return {"job": {"namespace": namespace, "name": name}, **rules}


def _stating(seconds: float, run: str, job: str, **sides: Any) -> list[Any]:
    """A START and a COMPLETE of one run of ``job`` whose facet states ``sides``."""
    facets = {"jobDependencies": facet(**sides)}
    return [
        openlineage(run_event(kind, seconds + offset, run, (NS, job), run_facets=facets))
        for kind, offset in (("START", 0), ("COMPLETE", 30))
    ]


def _old() -> list[Any]:
    return [
        *_stating(
            10,
            "00000000-0000-4000-8000-00000000c001",
            "etl.load",
            upstream=[_on(NS, "etl.extract", dependency_type="DIRECT_INVOCATION")],
            downstream=[_on(NS, "etl.report", status_trigger_rule="EXECUTE_ON_SUCCESS")],
            trigger_rule="ALL_SUCCESS",
        ),
        *_stating(
            100,
            "00000000-0000-4000-8000-00000000c002",
            "etl.load",
            upstream=[_on(NS, "etl.extract", sequence_trigger_rule="FINISH_TO_START")],
            trigger_rule="ONE_SUCCESS",
        ),
        *_stating(
            50,
            "00000000-0000-4000-8000-00000000c003",
            "etl.audit",
            upstream=[_on("ops", "gate", dependency_type="IMPLICIT_DEPENDENCY")],
        ),
    ]


def _new() -> list[Any]:
    return _stating(
        5_000,
        "00000000-0000-4000-8000-00000000c004",
        "etl.load",
        upstream=[_on(NS, "etl.extract", dependency_type="SCHEDULED")],
        trigger_rule="ALL_DONE",
    )


@pytest.fixture
def aged() -> dict[str, list[int]]:
    old = store(_old())
    assert derive_events(old).failed == 0
    _age(old)  # received 40 days ago, their runs last derived then
    new = store(_new())
    assert derive_events(new).failed == 0
    return {"old": old, "new": new}


def _control() -> list[tuple[Any, ...]]:
    """Every control edge, by its jobs' ids and names, with span, version, run and rules."""
    return sorted(
        ControlEdge.objects.values_list(
            "upstream_id",
            "upstream__namespace",
            "upstream__name",
            "downstream_id",
            "downstream__namespace",
            "downstream__name",
            "first_seen",
            "last_seen",
            "version",
            "last_run_uuid",
            "dependency_type",
            "sequence_trigger_rule",
            "status_trigger_rule",
            "trigger_rule",
        )
    )


def _jobs() -> list[tuple[Any, ...]]:
    return sorted(
        Job.objects.values_list("id", "namespace", "name", "first_seen", "last_seen", "facets")
    )


def test_control_edges_survive_retention_and_a_rederive(aged: dict[str, list[int]]) -> None:
    before, jobs = _control(), _jobs()
    # Three pairs; extract → load has the old runs' first seen and the new run's rules.
    assert len(before) == 3
    extract_load = next(row for row in before if row[2] == "etl.extract")
    assert extract_load[10:] == ("SCHEDULED", "", "", "ALL_DONE")
    gate = next(row for row in before if row[1] == "ops")
    assert gate[10] == "IMPLICIT_DEPENDENCY"

    result = apply_retention(30, batch_size=1)  # a batch per run
    assert result.runs == 3 and result.events == len(aged["old"])
    assert not Event.objects.filter(id__in=aged["old"]).exists()
    assert _control() == before
    assert RetainedControlEdge.objects.count() == 3
    # ops/gate, named only by a removed event, is kept to draw its edge to again.
    assert RetainedJob.objects.filter(namespace="ops", name="gate").exists()

    assert rederive(batch_size=1).failed == 0
    assert _control() == before
    assert _jobs() == jobs


def test_a_second_retention_removes_nothing_more(aged: dict[str, list[int]]) -> None:
    apply_retention(30)
    kept = sorted(RetainedControlEdge.objects.values_list())
    before = _control()

    again = apply_retention(30)

    assert (again.events, again.runs) == (0, 0)
    assert sorted(RetainedControlEdge.objects.values_list()) == kept
    assert _control() == before


def _naming_ops() -> tuple[int, int, int]:
    ops = Job.objects.filter(namespace="ops")
    kept = RetainedJob.objects.filter(namespace="ops").values_list("key_hash", flat=True)
    keys = [bytes(key) for key in kept]
    return (
        ControlEdge.objects.filter(Q(upstream__in=ops) | Q(downstream__in=ops)).count(),
        RetainedControlEdge.objects.filter(
            Q(upstream_key__in=keys) | Q(downstream_key__in=keys)
        ).count(),
        ops.count() + len(keys),
    )


def test_purge_takes_the_kept_control_edges_of_its_jobs(aged: dict[str, list[int]]) -> None:
    apply_retention(30)
    assert _naming_ops() == (1, 1, 2)
    keys = [bytes(key) for key in RetainedJob.objects.values_list("key_hash", flat=True)]

    report = purge_namespace("ops", by="steward")

    assert report.counts["catalog_retained_control_edge"] == 1
    assert report.counts["catalog_control_edge"] == 1
    assert _naming_ops() == (0, 0, 0)
    # Nothing else lost: the other kept control edges stay, and a rederive brings back
    # the graph without ops/gate.
    assert RetainedControlEdge.objects.count() == 2
    assert len(keys) - RetainedJob.objects.count() == 1
    assert rederive().failed == 0
    assert _naming_ops() == (0, 0, 0)
    assert len(_control()) == 2


def test_purge_takes_the_events_whose_run_depends_on_its_jobs(
    aged: dict[str, list[int]],
) -> None:
    """Without retention, etl.audit's own event names ops/gate: it goes too (an erasure
    leaves nothing), etl.audit is rebuilt from the events it keeps, and a rederive does
    not draw ops/gate again."""
    dry = purge_namespace("ops", by="steward", dry_run=True)
    assert dry.rebuilt_jobs == 1 and dry.counts["ingest_event"] == 2

    purge_namespace("ops", by="steward")

    assert not Event.objects.filter(job_name="etl.audit").exists()
    assert _naming_ops() == (0, 0, 0)
    assert rederive().failed == 0
    assert _naming_ops() == (0, 0, 0)
    assert len(_control()) == 2


def test_purge_takes_an_underived_event_whose_run_depends_on_its_jobs() -> None:
    pending = store(
        _stating(
            7,
            "00000000-0000-4000-8000-00000000c005",
            "etl.check",
            downstream=[_on("ops", "gate")],
        )
    )

    purge_namespace("ops", by="steward")

    assert not Event.objects.filter(id__in=pending).exists()

"""The graph's nodes and edges as PostgreSQL writes them (catalog.lineage.prebuilt, ADR
0109) are the bytes the Python assembly gives, on the same store, both ways.

``prebuilt.applies`` is the rule: patched to False, every graph takes the Python assembly.
Each test also counts the graphs the statement built, so none passes by taking the Python
path both times.
"""

from datetime import timedelta

import pytest
from django.db import connection

from catalog.lineage import prebuilt
from catalog.models import Job, LineageEdge
from tests.api import graph_snapshot_store
from tests.api.factories import (
    add_alias,
    at,
    iso,
    make_dataset,
    make_edge,
    make_job,
    make_job_edge,
    make_run,
)
from tests.api.test_graph_snapshot import REQUESTS

pytestmark = pytest.mark.django_db

# Text JSON must escape, and text it must not: quotes, backslashes, control characters,
# non-ASCII, U+2028 (escaped by the renderer over the whole answer), an astral character.
AWKWARD = 'q"uo\\te \n\t\x01\x1f\x7f é ü \u2028 \u2029 \U0001f600 </script>'


@pytest.fixture
def built(monkeypatch):
    """The graphs the statement built (prebuilt.build answered, not None)."""
    taken: list[prebuilt.Prebuilt] = []
    build = prebuilt.build

    def counting(*args, **kwargs):
        result = build(*args, **kwargs)
        if result is not None:
            taken.append(result)
        return result

    monkeypatch.setattr(prebuilt, "build", counting)
    return taken


def both_ways(api, monkeypatch, paths, headers=None):
    """Each path's response with the rule as it is, then with the Python assembly only."""
    fast = [api.get(path, headers=headers or {}) for path in paths]
    with monkeypatch.context() as patch:
        patch.setattr(prebuilt, "applies", lambda *args: False)
        slow = [api.get(path, headers=headers or {}) for path in paths]
    for path, one, other in zip(paths, fast, slow, strict=True):
        assert one.status_code == other.status_code, path
        assert one.content == other.content, path
        assert one["Content-Type"] == other["Content-Type"], path
    return fast


@pytest.fixture
def awkward_store():
    """Names that need escaping, several aliases, sub-second and whole-second times, an
    edge-API lineage type, a job edge no run backs, a reader-only job, a job whose runs had
    pairs cut, a failed run (not current), a dropped dataset."""
    a = make_dataset(f"shop.{AWKWARD}", namespace=f"postgres://{AWKWARD}:5432")
    b = make_dataset("shop.public.b", first_seen=at(1) + timedelta(microseconds=120))
    c = make_dataset("shop.public.c", is_dropped=True)
    d = make_dataset("shop.public.d")
    add_alias(a, "hive://metastore", "warehouse.a", reason="symlink")
    add_alias(a, "hive://metastore", f"warehouse.{AWKWARD}", reason="rule")
    add_alias(a, "aaa://first", "x", reason="symlink")
    load = make_job(f"load {AWKWARD}", last_seen=at(2) + timedelta(microseconds=999999))
    enrich = make_job("enrich", lineage_edges_cut=True)
    runs = [
        make_run(load, started=at(1) + timedelta(microseconds=123456)),
        make_run(load, "FAIL", started=at(30)),
    ]
    make_edge(a, b, load, first=at(1), last=at(30), runs=runs)
    make_edge(b, c, enrich, first=at(2), last=at(3))
    make_edge(c, d, make_job("export"), first=at(3) + timedelta(microseconds=5), last=at(4))
    LineageEdge.objects.filter(job=enrich).update(lineage_type="TABLE")
    make_job_edge(make_job("check"), b, "input", at(4), at(4), runs=[])
    return a, b, c, d, load


def test_awkward_text_times_and_flags_are_the_same_bytes(api, monkeypatch, awkward_store, built):
    a, b, c, d, load = awkward_store
    graph = "/api/v1/lineage/graph?node="
    paths = [
        f"{graph}dataset:{a.id}",
        f"{graph}dataset:{b.id}&direction=both&depth=5&max_nodes=500",
        f"{graph}dataset:{b.id}&lineage=observed",
        f"{graph}dataset:{b.id}&max_nodes=3",
        f"{graph}dataset:{b.id}&depth=1",
        f"{graph}dataset:{c.id}&direction=upstream&depth=1",
        f"{graph}dataset:{b.id}&as_of={iso(at(2))}",
        f"{graph}dataset:{b.id}&since={iso(at(3))}",
        f"{graph}job:{load.id}&depth=3",
        f"{graph}job:{Job.objects.get(name='check').id}",
        f"{graph}dataset:{d.id}&direction=downstream",  # no edge: empty arrays
    ]
    answers = both_ways(api, monkeypatch, paths)
    assert len(built) == len(paths)  # every one of them was written by PostgreSQL
    body = answers[1].json()
    assert body["nodes"][0]["name"] == f"shop.{AWKWARD}"
    assert "\\u2028" in answers[1].content.decode()  # escaped, as the renderer does
    assert {"TABLE"} <= {t for edge in body["edges"] for t in edge["lineage_types"]}
    assert any(edge["last_run_id"] is None for edge in body["edges"])
    assert any(edge["current"] for edge in body["edges"])
    assert any(".000120Z" in node["first_seen"] for node in body["nodes"])
    assert body["cut"]["run_edges"]["jobs"]  # the cut job came from the statement's rows
    assert answers[10].json()["edges"] == []


def test_times_are_the_same_bytes_in_any_date_style(api, monkeypatch, awkward_store, built):
    """The statement writes timestamps from their text in an ISO session and by to_char in
    any other (where the Python path cannot read a timestamp at all: psycopg's loaders
    read ISO only): both are the Python path's bytes."""
    b = awkward_store[1]
    path = f"/api/v1/lineage/graph?node=dataset:{b.id}&direction=both&depth=5&max_nodes=500"
    iso = both_ways(api, monkeypatch, [path])[0].content
    with connection.cursor() as cursor:
        cursor.execute("SET DateStyle = 'SQL, DMY'")
    try:
        assert connection.connection.info.parameter_status("DateStyle") == "SQL, DMY"
        other = api.get(path)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET DateStyle = 'ISO, MDY'")
    assert other.status_code == 200
    assert other.content == iso
    assert len(built) == 2


def test_an_indented_answer_is_the_same(api, monkeypatch, awkward_store, built):
    a = awkward_store[0]
    path = f"/api/v1/lineage/graph?node=dataset:{a.id}&depth=3"
    indented = both_ways(api, monkeypatch, [path], {"Accept": "application/json; indent=2"})
    assert built and indented[0].content.startswith(b"{\n")
    assert indented[0].json() == api.get(path).json()


def test_the_snapshot_store_observed_both_ways(api, monkeypatch, built):
    """Every request of the graph snapshots, with declarations out of the walk
    (``lineage=observed``): retired and restored nodes, a temporary dataset (the Python
    assembly folds it), a DAG (its child jobs: Python), columns and control (Python)."""
    graph_snapshot_store.build()
    paths = [
        f"{path}&lineage=observed" for path in REQUESTS if path.startswith("/api/v1/lineage/graph")
    ]
    answers = both_ways(api, monkeypatch, paths)
    assert all(answer.status_code in (200, 404) for answer in answers)
    # Taken where the rule says: not for columns, control, the DAG's child jobs, a graph
    # that reaches the temporary dataset (most of those with wide bounds) or a 404.
    assert 6 <= len(built) < len(paths)

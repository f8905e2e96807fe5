"""bench/bare_reads.py's BARE_DETAIL reads what the dataset detail shows (issue 42, ADR 0124):
nothing of the answer is missing from its rows, so the bench's ratio compares like with
like. Until ADR 0124 it read neither the retirement, the rules' slugs, the declared column
edges nor the outside-schema count."""

import pytest
from django.db import connection

from bench import bare_reads
from catalog.models import Dataset
from tests.api import reads_snapshot_store
from tests.api.project_fixtures import derive
from tests.api.test_static_column_lineage_model import _declaration

pytestmark = pytest.mark.django_db


def _bare(dataset_id: int) -> list[tuple]:
    pair = bare_reads.Pair("", bare_reads.BARE_DETAIL, {"id": dataset_id})
    return bare_reads.run(connection.connection, pair)


def _shown(answer: dict) -> list[str]:
    """What the detail shows that names something read from a table."""
    values = [answer["name"], answer["description"]]
    values += [alias["name"] for alias in answer["aliases"]]
    values += [alias["reason_rule"] for alias in answer["aliases"] if alias["reason_rule"]]
    values += [field["name"] for field in answer["fields"]]
    for kind in ("producing_jobs", "attempting_jobs", "consuming_jobs"):
        values += [entry["job"]["name"] for entry in answer[kind]]
    for edge in answer["column_lineage"] + answer["dataset_dependencies"]:
        values += [edge["source_name"], edge["source_field"]]
    for entry in answer["run_facts"]:
        values += [entry["job"]["name"], entry["run_id"]]
    return values


def _compare(api) -> dict[str, int]:
    """Each dataset's detail against its bare rows; how many showed each kind of row."""
    seen = {"hidden": 0, "rule": 0, "column": 0, "static": 0, "outside": 0, "facts": 0}
    for dataset_id in Dataset.objects.order_by("id").values_list("id", flat=True):
        served = api.get(f"/api/v1/datasets/{dataset_id}")
        rows = _bare(dataset_id)
        # The dataset's own row is the one part whose sixth column is its tags and owners.
        own = [row for row in rows if (row[5] or "").startswith("[")]
        if served.status_code == 404:  # retired: the reader's answer hides it
            assert own == []
            seen["hidden"] += 1
            continue
        answer = served.json()
        assert len(own) == 1
        text = "\n".join("|".join(str(value) for value in row) for row in rows)
        for value in _shown(answer):
            assert value in text, (dataset_id, value)
        counts = [row[0] for row in rows if all(value is None for value in row[1:])]
        assert counts == [answer["column_lineage_outside_schema"]]
        edges = answer["column_lineage"] + answer["dataset_dependencies"]
        seen["rule"] += any(alias["reason_rule"] for alias in answer["aliases"])
        seen["column"] += any(not edge["static"] for edge in edges)
        seen["static"] += any(edge["static"] for edge in edges)
        seen["outside"] += answer["column_lineage_outside_schema"] > 0
        seen["facts"] += bool(answer["run_facts"])
    return seen


def test_the_bare_detail_reads_what_the_detail_shows(api) -> None:
    reads_snapshot_store.build_with_a_rule()
    seen = _compare(api)
    # Every kind of row was there to be missed.
    assert all(seen[kind] for kind in ("hidden", "rule", "column", "outside", "facts")), seen


def test_the_bare_detail_reads_the_declared_column_edges(api) -> None:
    derive(_declaration())  # a job's declared column edges and dependencies
    assert _compare(api)["static"]

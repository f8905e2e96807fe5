"""bench/changes.py's store has column lineage as a producer sends it and derivation stores
it, so /changes' currency reads facts there: keys as ``column_values`` makes them, edges as
derivation's recompute folds them, readers current and stale. Without facts every reader
was stale and the currency's fact branch was never measured (docs/benchmarks.md)."""

import pytest
from django.db import connection

from bench.changes import COLUMN_LINEAGE, FIELD_FORM, KEY_TAIL, READ_TABLES, TRANSFORMATION
from bench.read import BUILD as READ_BUILD
from catalog.lineage import currency
from catalog.services.derivation import column_edges
from catalog.services.derivation.column_facts import column_values

pytestmark = pytest.mark.django_db

EDGE_COLUMNS = (
    "target_id, source_id, job_id, key_hash, target_field, source_field, transformation_type,"
    " transformation_subtype, transformation_description, masking, dataset_level,"
    " field_transformation_type, field_transformation_description, first_seen, last_seen,"
    " last_run_id, run_count"
)


def _rows(sql: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in cursor]


@pytest.fixture
def store() -> None:
    """The bench's first statements at a small size, ids from 1 as in its scratch database
    (TRUNCATE ... RESTART IDENTITY, rolled back with the test)."""
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(READ_TABLES)} RESTART IDENTITY CASCADE")
        values = {"datasets": 100, "jobs": 25, "runs": 1_000, "key_tail": KEY_TAIL.encode()}
        for statement in [*READ_BUILD[: len(READ_TABLES)], *COLUMN_LINEAGE]:
            cursor.execute(statement, values)


def test_facts_are_keyed_as_derivation_keys_what_a_producer_sends(store):
    facts = _rows("SELECT target_field, source_field, key_hash FROM catalog_column_lineage_fact")
    assert len(facts) > 1000
    for target, source, key in facts:
        assert column_values(target, source, TRANSFORMATION, FIELD_FORM)[1] == key


def test_both_columns_are_the_datasets_fields(store):
    assert _rows(
        """SELECT count(*) FROM catalog_column_lineage_edge e
           WHERE NOT EXISTS (SELECT 1 FROM catalog_dataset_field f
                             WHERE f.dataset_id = e.source_id AND f.name = e.source_field)
              OR NOT EXISTS (SELECT 1 FROM catalog_dataset_field f
                             WHERE f.dataset_id = e.target_id AND f.name = e.target_field)"""
    ) == [(0,)]


def test_the_edges_are_derivations_fold_of_the_facts(store):
    edges = f"SELECT {EDGE_COLUMNS} FROM catalog_column_lineage_edge ORDER BY 1, 2, 3, 4"
    built = _rows(edges)
    column_edges.recompute([run for (run,) in _rows("SELECT id FROM catalog_run")])
    assert built and _rows(edges) == built


def test_readers_are_current_and_stale(store):
    edges = dict(_rows("SELECT id, job_id FROM catalog_column_lineage_edge"))
    current = currency.current_column_edges(edges)
    # A quarter were dropped by their job's newest run (k % 4 = 3 of 0-24 readers).
    assert 0.15 < 1 - len(current) / len(edges) < 0.35, (len(current), len(edges))

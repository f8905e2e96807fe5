"""The dataset detail's column lineage in one statement (catalog.lineage.column_detail,
ADR 0135) answers what its three reads answered: ``column_lineage.into`` for one dataset
(observed, declared, both) and ``outside_schema_count``, edge for edge, in order."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.lineage import column_detail, column_lineage
from tests.api import reads_snapshot_store
from tests.api.project_fixtures import derive
from tests.api.test_static_column_lineage_model import _declaration
from tests.api.test_static_dataset_detail import _observed_run

pytestmark = pytest.mark.django_db

KINDS = [(True, True), (True, False), (False, True)]


def _three_reads(dataset_id: int, limit: int, observed: bool, static: bool):
    lineage = column_lineage.into([dataset_id], limit, observed=observed, static=static)
    return lineage, column_lineage.outside_schema_count(dataset_id)


def _targets() -> list[int]:
    """The datasets column edges (observed or declared) lead into, and the first two."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT target_id FROM catalog_column_lineage_edge UNION SELECT a.dataset_id"
            " FROM catalog_static_column_lineage c JOIN catalog_dataset_alias a"
            " ON a.id = c.target_alias_id UNION (SELECT id FROM catalog_dataset ORDER BY id"
            " LIMIT 2) ORDER BY 1"
        )
        return [row[0] for row in cursor.fetchall()]


def _compare_every_dataset(limits: tuple[int, ...]) -> tuple[int, int, int]:
    """Each target, kind and limit both ways; how many edges, counted and cut answers."""
    edges = counted = cut = 0
    for dataset_id in _targets():
        for observed, static in KINDS:
            whole = None
            for limit in limits:
                folded = column_detail.into_dataset(dataset_id, limit, observed, static)
                assert folded == _three_reads(dataset_id, limit, observed, static), dataset_id
                lineage, outside = folded
                found = len(lineage.edges) + len(lineage.dependencies)
                whole = found if whole is None else whole
                edges += found
                counted += outside > 0
                cut += found < whole
    return edges, counted, cut


def test_the_folded_read_answers_the_three_reads_over_the_snapshot_store():
    # Observed edges and dependencies, masked and redacted descriptions, several jobs and
    # sources per target; a limit of 2 cuts them.
    reads_snapshot_store.build()
    edges, counted, cut = _compare_every_dataset((200, 2))
    assert edges > 40 and cut > 0
    with connection.cursor() as cursor:  # a schema without some edges' target fields
        cursor.execute("DELETE FROM catalog_dataset_field WHERE name = 'total'")
    edges, counted, cut = _compare_every_dataset((200,))
    assert counted > 0


def test_the_folded_read_answers_the_three_reads_with_declared_edges():
    # A job's declaration (static column edges and a dependency) beside an observed edge.
    derive(_declaration(), _observed_run())
    edges, _, cut = _compare_every_dataset((200, 1))
    assert edges > 3 and cut > 0


def test_the_folded_read_is_one_statement_and_more_only_for_current_edges():
    reads_snapshot_store.build()
    for dataset_id in _targets():
        with CaptureQueriesContext(connection) as queries:
            lineage, _ = column_detail.into_dataset(dataset_id, 200, observed=True, static=True)
        observed = [e for e in lineage.edges + lineage.dependencies if not e.static]
        # one statement, and the currency of the observed edges when there are some
        assert len(queries) == 1 + bool(observed)

"""The mount's ``/lineage`` sends its own reads as prepared statements on a kept connection
(ADR 0134): the root by name, the drawn jobs' every link, the nodes' rows, the jobs' and
the datasets' facts, and the datasets' column lineage are each one fixed text (ids as one
array literal, a text parameter), so each is planned once per connection, not on every
request. Past the five custom plans PostgreSQL may keep a generic one: the answer is the
same bytes, and the same as with the setting off (Django's cursor, every statement planned
anew).
"""

import pytest
from django.db import connection

from tests.marquez.conftest import JOB_NS, S3, MarquezClient
from tests.prepared_statements import prepared_by_name

pytestmark = pytest.mark.django_db(transaction=True)

# Each of the mount's prepared reads, by a text only it holds.
STATEMENTS = {
    "root": "catalog_alias_rule r WHERE r.enabled",
    "job_root": "SELECT j.id FROM catalog_job j WHERE j.key_hash",
    "links": "ORDER BY je.job_id, je.dataset_id, je.direction",
    "node_rows": "SELECT p.namespace, p.name FROM catalog_job p",
    "job_facts": "FROM catalog_job_dataset jd",
    "dataset_facts": "f.ordinal AS k1",
    "column_lineage": "FROM catalog_column_lineage_edge c\nJOIN catalog_dataset s",
}


def _prepared() -> dict[str, int]:
    return prepared_by_name(STATEMENTS)


@pytest.fixture
def kept(fresh_connection: None, world: None) -> None:
    """The world, then a connection of this test's own: nothing prepared on it yet."""
    connection.close()


def _lineage(mz: MarquezClient, node: str) -> bytes:
    response = mz.get("/lineage", nodeId=node, depth="5")
    assert response.status_code == 200, response.content
    return response.content


@pytest.mark.parametrize("node", [f"dataset:{S3}:raw/orders/daily", f"job:{JOB_NS}:report.build"])
def test_the_graph_prepares_its_reads_once_and_answers_the_same(
    kept: None, mz: MarquezClient, node: str, settings
) -> None:
    first = _lineage(mz, node)
    for _ in range(6):  # past PostgreSQL's five custom plans: a generic plan may serve it
        assert _lineage(mz, node) == first
    prepared = _prepared()
    # A job root is found by its key (a statement of its own, not the dataset root's).
    expected = set(STATEMENTS) - ({"root"} if node.startswith("job:") else {"job_root"})
    assert set(prepared) == expected
    assert all(runs == 7 for runs in prepared.values()), prepared
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    connection.close()
    assert _lineage(mz, node) == first
    assert _prepared() == {}

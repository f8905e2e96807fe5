"""/datasets/{id}/aliases reads a page of the dataset's aliases, however many it has (ADR
0184): a range of catalog_alias_dataset_id_idx ``(dataset_id, id)`` read in order, stopping
after the page. With the index on dataset_id alone, PostgreSQL read every alias of the
dataset and sorted them, or walked the primary key past every other dataset's aliases. The
store is built with SQL: the dataset's aliases are the newest, after many more of others'."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.factories import make_dataset
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db

ALIASES = 1000
OTHERS = 1000  # datasets of 20 aliases each
PAGE = 50

# %(count)s aliases of dataset %(dataset)s named %(prefix)s000001...
_ALIASES = """
INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
    reason_version, first_seen, last_seen, dataset_id, is_table_name)
SELECT 'hive://meta:9083', %(prefix)s || lpad(g::text, 6, '0'), sha256((%(prefix)s || g)::bytea),
       'symlink', 'symlinks', '[]', now(), now(), %(dataset)s, false
FROM generate_series(1, %(count)s) g
"""


# %(datasets)s datasets of 20 aliases each, a dataset's together (as a derivation batch
# writes a dataset's names; the planner takes the index by how the table's rows follow it).
_OTHERS = """
WITH d AS (
    INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags,
        owners, browse_path)
    SELECT 'postgres://db:5432', 'shop.public.other_' || g, '{}', '{}', '', '', false, now(),
           now(), now(), 2, '[]', '[]', ''
    FROM generate_series(1, %(datasets)s) g RETURNING id, name
)
INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
    reason_version, first_seen, last_seen, dataset_id, is_table_name)
SELECT 'postgres://db:5432', d.name || '_' || a, sha256((d.name || '_' || a)::bytea), 'event',
       '', '[]', now(), now(), d.id, false
FROM d, generate_series(1, 20) a ORDER BY d.id, a
"""


def _aliases(dataset: int, prefix: str, count: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_ALIASES, {"dataset": dataset, "prefix": prefix, "count": count})


def test_a_page_of_aliases_reads_the_page(api) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_OTHERS, {"datasets": OTHERS})
    dataset = make_dataset("shop.public.orders")
    _aliases(dataset.id, "snap_", ALIASES)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE catalog_dataset_alias")
    with CaptureQueriesContext(connection) as captured:
        body = api.get(f"/api/v1/datasets/{dataset.id}/aliases?limit={PAGE}").json()
    assert body["results"][0]["name"] == "shop.public.orders"  # oldest first
    assert len(body["results"]) == PAGE
    # The statement as sent (its values inlined): the page's; the first checks the dataset.
    [sql] = [q["sql"] for q in captured.captured_queries if "catalog_dataset_alias" in q["sql"]]
    scans = rows_read(sql, "catalog_dataset_alias")
    # The page and the one after it, that says there is a next page: the index's range.
    assert scans == {"catalog_alias_dataset_id_idx": PAGE + 1}, (scans, sql)

"""A dataset's aliases in name order at 50,000 aliases: what an index on the order would save
the reads, and what it would cost the writes (ADR 0184).

Builds a scratch database (migrated anew, --database) holding --background datasets with two
aliases each and one dataset with --aliases symlink aliases (``hive://meta:9083``,
``warehouse.snap_000001``...), VACUUM ANALYZE, then, for each index layout of
``catalog_dataset_alias``:

  reads   each statement run once to warm, then the best of --repeat (ms, as
          EXPLAIN ANALYZE times it) and its top node's buffers:
          name200  the detail's first 200 by (namespace, name, id) (catalog.reads.datasets)
          name201  the graph node's first 201 (catalog.lineage.assembly, prebuilt)
          name200 left()  the first 200 in the order the name index holds
          ids51    /datasets/{id}/aliases' first page (by id, with the rule: 50 + 1)
          count    how many (the detail, the list item, a cut graph node)
  writes  --aliases new aliases of a new dataset as derivation writes them, in batches of
          500 (catalog.services.derivation.datasets: the INSERT with no dataset, then the
          UPDATE that assigns it, ``locks.bulk_update``'s unnest), then the same rows seen
          again (an UPDATE of last_seen): seconds, best of --repeat, rows removed between

and the alias table's index sizes (reindexed first). Layouts, one after the other:
``(dataset_id, id)``, as migrated (catalog migration 0039); ``+ name index`` (dataset_id,
left(namespace, 100), left(name, 200), id) beside it (left(): an alias is unbounded text and
a btree entry holds ~2,700 bytes); ``dataset_id alone``, the index before 0039, instead of
both. Nothing is asserted.

Usage: .venv/bin/python bench/alias_order.py [--database URL] [--aliases 50000]
"""

import argparse
import re
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import migrated_database

DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench_alias_order"
BATCH = 500

FILL = """
INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
    lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags, owners,
    browse_path)
SELECT 'postgres://db:5432', 'shop.public.t_' || g, '{}', '{}', '', '', false, now(), now(),
       now(), 2, '[]', '[]', ''
FROM generate_series(1, %(datasets)s) g
"""
ALIASES = """
INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
    reason_version, first_seen, last_seen, dataset_id, is_table_name)
SELECT %(namespace)s, %(prefix)s || lpad(g::text, 6, '0'), sha256((%(prefix)s || g)::bytea),
       'symlink', 'symlinks', '[]', now(), now(), %(dataset)s, false
FROM generate_series(1, %(count)s) g
"""
BACKGROUND = """
INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
    reason_version, first_seen, last_seen, dataset_id, is_table_name)
SELECT d.namespace, d.name || s.suffix, sha256((d.name || s.suffix)::bytea), 'event', '',
       '[]', now(), now(), d.id, false
FROM catalog_dataset d, (VALUES (''), ('_v2')) s(suffix)
WHERE d.id <> %(big)s
"""
COLUMNS = "a.id, a.namespace, a.name, a.reason"
READS = {
    "name200": f"SELECT {COLUMNS} FROM catalog_dataset_alias a WHERE a.dataset_id = %(d)s "
    "ORDER BY a.namespace, a.name, a.id LIMIT 200",
    "name201": f"SELECT {COLUMNS} FROM catalog_dataset_alias a WHERE a.dataset_id = %(d)s "
    "ORDER BY a.namespace, a.name, a.id LIMIT 201",
    "name200 left()": f"SELECT {COLUMNS} FROM catalog_dataset_alias a WHERE a.dataset_id = %(d)s "
    "ORDER BY left(a.namespace, 100), left(a.name, 200), a.id LIMIT 200",
    "ids51": f"SELECT {COLUMNS}, r.slug FROM catalog_dataset_alias a "
    "LEFT JOIN catalog_alias_rule r ON r.id = a.reason_rule_id WHERE a.dataset_id = %(d)s "
    "ORDER BY a.id LIMIT 51",
    "count": "SELECT count(*) FROM catalog_dataset_alias a WHERE a.dataset_id = %(d)s",
}
LAYOUTS = {
    "(dataset_id, id)": [],
    "+ name index": [
        "CREATE INDEX CONCURRENTLY catalog_alias_dataset_name_idx ON catalog_dataset_alias "
        "(dataset_id, left(namespace, 100), left(name, 200), id)"
    ],
    "dataset_id alone": [
        "DROP INDEX CONCURRENTLY catalog_alias_dataset_name_idx",
        "CREATE INDEX CONCURRENTLY catalog_alias_dataset_idx ON catalog_dataset_alias (dataset_id)",
        "DROP INDEX CONCURRENTLY catalog_alias_dataset_id_idx",
    ],
}
# Derivation's two statements per batch of new aliases, and the UPDATE of a batch seen again.
INSERT = """
INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
    reason_version, first_seen, last_seen, is_table_name)
SELECT 'hive://meta:9083', n, sha256(convert_to(n, 'UTF8')), 'symlink', 'symlinks', '[]',
       now(), now(), false
FROM unnest(%(names)s::text[]) n RETURNING id
"""
ASSIGN = """
UPDATE catalog_dataset_alias a SET dataset_id = v.dataset_id, last_seen = now()
FROM unnest(%(ids)s::bigint[], %(datasets)s::bigint[]) v(id, dataset_id) WHERE a.id = v.id
"""
SEEN = """
UPDATE catalog_dataset_alias a SET last_seen = now()
FROM unnest(%(ids)s::bigint[]) v(id) WHERE a.id = v.id
"""


def explained(cursor: psycopg.Cursor, sql: str, values: dict) -> tuple[float, str, str]:
    """(ms, top node, its buffers) of one EXPLAIN (ANALYZE, BUFFERS) run."""
    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) {sql}", values)
    lines = [row[0] for row in cursor.fetchall()]
    timed = (re.search(r"Execution Time: ([\d.]+)", line) for line in lines)
    total = next(float(found[1]) for found in timed if found)
    nodes = [line.strip().lstrip("-> ") for line in lines if "cost=" in line]
    buffers = next((line.strip() for line in lines if line.strip().startswith("Buffers")), "")
    plan = " / ".join(node.split("  (")[0] for node in nodes[:4])
    return total, plan, buffers


def reads(cursor: psycopg.Cursor, dataset: int, repeat: int) -> None:
    for name, sql in READS.items():
        explained(cursor, sql, {"d": dataset})
        runs = [explained(cursor, sql, {"d": dataset}) for _ in range(repeat)]
        best = min(runs)
        print(f"  {name:<15} {best[0]:8.2f} ms  {best[2]:<40} {best[1]}")


def writes(connection: psycopg.Connection, count: int, repeat: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(FILL, {"datasets": 1})
        cursor.execute("SELECT max(id) FROM catalog_dataset")
        [(dataset,)] = cursor.fetchall()
    best_new = best_seen = float("inf")
    for attempt in range(repeat):
        names = [f"warehouse.write_{attempt}_{i:06}" for i in range(count)]
        ids: list[int] = []
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            with connection.transaction(), connection.cursor() as cursor:
                cursor.execute(INSERT, {"names": names[start : start + BATCH]})
                batch = [row[0] for row in cursor.fetchall()]
                cursor.execute(ASSIGN, {"ids": batch, "datasets": [dataset] * len(batch)})
                ids += batch
        best_new = min(best_new, time.perf_counter() - started)
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            with connection.transaction(), connection.cursor() as cursor:
                cursor.execute(SEEN, {"ids": ids[start : start + BATCH]})
        best_seen = min(best_seen, time.perf_counter() - started)
        with connection.transaction(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM catalog_dataset_alias WHERE dataset_id = %s", [dataset])
        connection.execute("VACUUM catalog_dataset_alias")
    print(f"  writes: {count:,} new aliases {best_new:.2f} s, seen again {best_seen:.2f} s")


def sizes(cursor: psycopg.Cursor) -> None:
    cursor.execute(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
        "WHERE indrelid = 'catalog_dataset_alias'::regclass ORDER BY 1"
    )
    for name, size in cursor.fetchall():
        print(f"  {name:<40} {size / 1048576:7.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", default=DATABASE, help="the scratch database (made anew)")
    parser.add_argument("--aliases", type=int, default=50_000)
    parser.add_argument("--background", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    migrated_database(options.database)
    with psycopg.connect(options.database, autocommit=True) as connection:
        with connection.cursor() as cursor:
            cursor.execute(FILL, {"datasets": options.background + 1})
            big = options.background + 1
            cursor.execute("SELECT max(id) FROM catalog_dataset")
            [(big,)] = cursor.fetchall()
            cursor.execute(BACKGROUND, {"big": big})
            cursor.execute(
                ALIASES,
                {
                    "namespace": "hive://meta:9083",
                    "prefix": "warehouse.snap_",
                    "dataset": big,
                    "count": options.aliases,
                },
            )
        connection.execute("VACUUM ANALYZE")
        for layout, statements in LAYOUTS.items():
            for statement in statements:
                connection.execute(statement)
            connection.execute("REINDEX TABLE catalog_dataset_alias")
            connection.execute("VACUUM ANALYZE catalog_dataset_alias")
            print(f"{layout}: one dataset of {options.aliases:,} aliases")
            with connection.cursor() as cursor:
                reads(cursor, big, options.repeat)
                sizes(cursor)
            writes(connection, options.aliases, options.repeat)


if __name__ == "__main__":
    main()

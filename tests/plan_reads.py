"""What a statement's plan reads of a table, for the tests that hold a read to the rows it
shows: a bounded page, a count that stops, a range of an index (ADRs 0168, 0181, 0183,
0184, 0186)."""

from typing import Any

from django.db import connection


def rows_read(sql: str, table_prefix: str) -> dict[str, int]:
    """The rows ``sql``'s scans of the tables whose names start with ``table_prefix`` read
    (kept or filtered out, times their loops), per index (a sequential scan: its table), by
    ``EXPLAIN ANALYZE``. Sequential and bitmap scans are priced out, for the test's
    transaction: a test's small table would be read whole, where a store's is not."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0][0]["Plan"]
    read: dict[str, int] = {}

    def walk(node: dict[str, Any]) -> None:
        table = node.get("Relation Name", "")
        if table.startswith(table_prefix):
            rows = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            scan = node.get("Index Name", table)
            read[scan] = read.get(scan, 0) + int(rows * node.get("Actual Loops", 1))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    return read

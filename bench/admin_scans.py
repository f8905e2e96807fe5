"""What the admin's lists over the tables that grow with use read, filtered and searched
(ADR 0195): a scratch store of N rows (300,000 by default) in each of the admin log, the
dead letters and the webhook deliveries, and in each derived table a filter with no index
reads (ADR 0208: events, changes, aliases, alias links, column edges, jobs, datasets,
steward labels), each page asked for by a logged-in superuser in this process, and every
statement the page sent explained with ANALYZE and BUFFERS.

Usage: .venv/bin/python bench/admin_scans.py --database postgres://.../scratch [--rows N]
       [--repeat 3] [--reuse]
Prints, for each page, its statements, those with a DISTINCT, the rows their scans of the
page's table read, the shared buffers they touched and the page's median milliseconds.
Rare values (a deletion in the log, a too-deep letter, one subscription's delivery) are
one in a thousand or fewer, as a steward looks for them.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import migrated_django_without_broker

FILL = [
    # The admin log: changes of five kinds of object, one deletion in a thousand, one
    # alias rule's entry in five thousand.
    """
    INSERT INTO django_admin_log (action_time, user_id, content_type_id, object_id,
        object_repr, action_flag, change_message)
    SELECT timestamptz '2026-11-01' + g * interval '1 second', %(user)s,
           CASE WHEN g %% 5000 = 0 THEN %(rare_type)s ELSE %(common_type)s END, g::text,
           'dataset ' || g, CASE WHEN g %% 1000 = 0 THEN 3 ELSE 2 END,
           '[{"changed": {"fields": ["owners"]}}] replayed #' || g
    FROM generate_series(1, %(rows)s) AS g
    """,
    # Dead letters: one topic, 'invalid-event' mostly; one in a thousand too deep, one in
    # five thousand from a second topic.
    """
    INSERT INTO ingest_dead_letter (topic, partition, "offset", kind, key, value,
        value_size, message_time, reason_code, reason, received_at)
    SELECT CASE WHEN g %% 5000 = 0 THEN 'rare-topic' ELSE 'lineage' END, 0, g,
           'openlineage', NULL, convert_to('{"bad": ' || g || '}', 'UTF8'), 12, NULL,
           CASE WHEN g %% 1000 = 0 THEN 'too-deep' ELSE 'invalid-event' END,
           'bench reason', timestamptz '2026-11-01' + g * interval '1 second'
    FROM generate_series(1, %(rows)s) AS g
    """,
    # Deliveries: the busy subscription's; one in three thousand the rare one's, one in a
    # thousand dead, one in two thousand a ping.
    """
    INSERT INTO catalog_webhook_delivery (id, subscription_id, change_key, kind, payload,
        status, attempts, next_attempt_at, last_error, response_excerpt, created_at)
    SELECT gen_random_uuid(), CASE WHEN g %% 3000 = 0 THEN %(rare_sub)s ELSE %(busy_sub)s END,
           sha256(g::text::bytea),
           CASE WHEN g %% 2000 = 0 THEN 'ping' ELSE 'edge_added' END, '{}'::jsonb,
           CASE WHEN g %% 1000 = 0 THEN 'dead' ELSE 'delivered' END, 1,
           timestamptz '2026-11-01', '', '', timestamptz '2026-11-01' + g * interval '1 second'
    FROM generate_series(1, %(rows)s) AS g
    """,
]
# The derived tables whose filters no index serves in the list's order (ADR 0208): one row
# in a thousand of each rare value, spread along the ids as derivation writes them.
FILL_DERIVED = [
    """
    INSERT INTO ingest_event (received_at, kind, event_type, payload, digest,
        derivation_status)
    SELECT timestamptz '2026-11-01' + g * interval '1 second',
           CASE WHEN g %% 1000 = 0 THEN 'dataset' ELSE 'run' END,
           CASE WHEN g %% 1000 = 1 THEN 'FAIL' ELSE 'COMPLETE' END,
           jsonb_build_object('n', g), sha256(('bench event ' || g)::bytea),
           CASE WHEN g %% 1000 = 2 THEN 'derived' ELSE 'failed' END
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_dataset (namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, updated_at, display_rank, owners, tags, browse_path,
        first_seen, last_seen)
    SELECT 'bench', 'table_' || g, '{}', '{}', '', '', g %% 1000 = 0, now(), 0, '[]', '[]',
           '', timestamptz '2026-11-01', timestamptz '2026-11-01' + (g %% 7777) * interval '1 s'
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets,
        facet_versions, processing_type, job_type, integration, description, updated_at,
        owners, tags, first_seen, last_seen)
    SELECT 'bench', 'job_' || g, sha256(('bench job ' || g)::bytea), g %% 1000 = 0, '{}',
           '{}', '', '', '', '', now(), '[]', '[]', timestamptz '2026-11-01',
           timestamptz '2026-11-01' + (g %% 7777) * interval '1 s'
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_dataset_alias (namespace, name, key_hash, reason, reason_detail,
        reason_version, is_table_name, dataset_id, first_seen, last_seen)
    SELECT 'bench', 'alias_' || g, sha256(('bench alias ' || g)::bytea),
           CASE WHEN g %% 1000 = 0 THEN 'rename' ELSE 'event' END, '', '[]', false,
           (SELECT min(id) FROM catalog_dataset) + g - 1, now(), now()
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_alias_link (reason, alias_a_id, alias_b_id)
    SELECT CASE WHEN a.id %% 1000 = 0 THEN 'rule' ELSE 'symlink' END, a.id, a.id + 1
    FROM catalog_dataset_alias a WHERE a.id < (SELECT max(id) FROM catalog_dataset_alias)
    """,
    """
    INSERT INTO catalog_column_lineage_edge (source_field, target_field, transformation_type,
        transformation_subtype, transformation_description, masking, key_hash, first_seen,
        last_seen, run_count, source_id, target_id, job_id, dataset_level)
    SELECT 'in_' || g, 'out_' || g, 'DIRECT', 'IDENTITY', '', false,
           sha256(('bench edge ' || g)::bytea), now(), now(), 1,
           (SELECT min(id) FROM catalog_dataset), (SELECT max(id) FROM catalog_dataset),
           (SELECT min(id) FROM catalog_job), g %% 1000 = 0
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_dataset_change (alias_id, kind, "column", old_type, new_type,
        changed_at, run_id, before_hash, after_hash, key_hash)
    SELECT (SELECT min(id) FROM catalog_dataset_alias),
           CASE WHEN g %% 1000 = 0 THEN 'type_changed' ELSE 'column_added' END, 'c' || g, '',
           'int', timestamptz '2026-11-01' + g * interval '1 second', '',
           sha256(('before ' || g)::bytea), sha256(('after ' || g)::bytea),
           sha256(('key ' || g)::bytea)
    FROM generate_series(1, %(rows)s) AS g
    """,
    """
    INSERT INTO catalog_steward_label (target, namespace, name, key_hash, kind, field, key,
        value, hides)
    SELECT CASE WHEN g %% 1000 = 0 THEN 'job' ELSE 'dataset' END, 'bench', 'table_' || g,
           sha256(('bench label ' || g)::bytea),
           CASE WHEN g %% 1000 = 1 THEN 'owner' ELSE 'tag' END, '', 'k', '', g %% 1000 = 2
    FROM generate_series(1, %(rows)s) AS g
    """,
]
TABLES = {
    "admin/logentry": "django_admin_log",
    "ingest/deadletter": "ingest_dead_letter",
    "catalog/webhookdelivery": "catalog_webhook_delivery",
    "ingest/event": "ingest_event",
    "catalog/datasetchange": "catalog_dataset_change",
    "catalog/datasetalias": "catalog_dataset_alias",
    "catalog/aliaslink": "catalog_alias_link",
    "catalog/columnlineageedge": "catalog_column_lineage_edge",
    "catalog/job": "catalog_job",
    "catalog/dataset": "catalog_dataset",
    "catalog/stewardlabel": "catalog_steward_label",
}
# The derived tables' filtered pages (ADR 0208), "?searched_below=" the window before.
DERIVED_PAGES = [
    "/admin/ingest/event/?kind__exact=dataset",
    "/admin/ingest/event/?event_type=FAIL",
    "/admin/ingest/event/?derivation_status__exact=derived",
    "/admin/ingest/event/?event_type=ABORT",
    "/admin/catalog/datasetchange/?kind__exact=type_changed",
    "/admin/catalog/datasetalias/?reason__exact=rename",
    "/admin/catalog/aliaslink/?reason__exact=rule",
    "/admin/catalog/columnlineageedge/?dataset_level__exact=1",
    "/admin/catalog/job/?is_placeholder__exact=1",
    "/admin/catalog/dataset/?is_dropped__exact=1",
    "/admin/catalog/stewardlabel/?target__exact=job",
    "/admin/catalog/stewardlabel/?kind__exact=owner",
    "/admin/catalog/stewardlabel/?hides__exact=1",
]


def fill(rows: int) -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.contrib.contenttypes.models import ContentType
    from django.db import connection

    from catalog.models import AliasRule, Dataset, WebhookSubscription

    user = User.objects.create(username="bench-admin", is_staff=True, is_superuser=True)
    busy = WebhookSubscription.objects.create(name="busy", url="https://example.com/busy")
    rare = WebhookSubscription.objects.create(name="rare", url="https://example.com/rare")
    values = {
        "rows": rows,
        "user": user.pk,
        "common_type": ContentType.objects.get_for_model(Dataset).pk,
        "rare_type": ContentType.objects.get_for_model(AliasRule).pk,
        "busy_sub": busy.pk,
        "rare_sub": rare.pk,
    }
    with connection.cursor() as cursor:
        for statement in FILL + FILL_DERIVED:
            cursor.execute(statement, values)
        for table in TABLES.values():
            cursor.execute(f"VACUUM ANALYZE {table}")
    return values


def pages(values: dict[str, Any]) -> list[str]:
    log, letters, deliveries = (f"/admin/{path}/" for path in list(TABLES)[:3])
    return [
        log,
        f"{log}?q=replayed+%23123",
        f"{log}?q=no+such+text",
        f"{log}?action_flag__exact=3",
        f"{log}?content_type__id__exact={values['rare_type']}",
        letters,
        f"{letters}?reason_code__exact=too-deep",
        f"{letters}?topic__exact=rare-topic",
        deliveries,
        f"{deliveries}?subscription__id__exact={values['rare_sub']}",
        f"{deliveries}?subscription__id__exact={values['rare_sub']}&o=-1",
        f"{deliveries}?status=dead",
        f"{deliveries}?kind__exact=ping",
        *DERIVED_PAGES,
    ]


def reads(sql: str, params: Any, table: str) -> tuple[int, int]:
    """Rows ``table``'s scans read (kept or filtered out, times their loops) and the shared
    buffers the statement touched, by EXPLAIN (ANALYZE, BUFFERS)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0][0]["Plan"]
    rows = 0

    def walk(node: dict[str, Any]) -> None:
        nonlocal rows
        if node.get("Relation Name") == table:
            read = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
            rows += int(read * node.get("Actual Loops", 1))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan)
    return rows, plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)


def measure(client: Any, path: str, repeat: int) -> tuple[int, int, int, int, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    table = next(name for prefix, name in TABLES.items() if f"/{prefix}/" in path)
    quoted = f'"{table}"'  # not catalog_dataset in catalog_dataset_alias
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{path}: HTTP {response.status_code}")
    statements = [
        q["sql"] for q in captured.captured_queries if q["sql"].startswith(("SELECT", "WITH"))
    ]
    distinct = sum("SELECT DISTINCT" in sql for sql in statements)
    rows = buffers = 0
    for sql in statements:
        if quoted in sql:
            read, touched = reads(sql, None, table)
            rows, buffers = rows + read, buffers + touched
    return len(statements), distinct, rows, buffers, statistics.median(times)


def main(database: str, rows: int, repeat: int, reuse: bool, only: str) -> None:
    migrated_django_without_broker(database, fresh=not reuse)
    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    if reuse:
        from django.contrib.contenttypes.models import ContentType

        from catalog.models import AliasRule, WebhookSubscription

        values = {
            "rare_type": ContentType.objects.get(model="aliasrule").pk,
            "rare_sub": WebhookSubscription.objects.get(name="rare").pk,
        }
        assert AliasRule is not None
    else:
        started = time.monotonic()
        values = fill(rows)
        print(f"{rows:,} rows a table stored in {time.monotonic() - started:.0f} s", flush=True)
    client = Client()
    client.force_login(User.objects.get(username="bench-admin"))
    print(f"{'page':62} {'stmts':>5} {'DISTINCT':>8} {'rows read':>10} {'buffers':>8} {'ms':>7}")
    for path in (page for page in pages(values) if only in page):
        statements, distinct, read, buffers, took = measure(client, path, repeat)
        print(
            f"{path:62} {statements:5} {distinct:8} {read:10,} {buffers:8,} {took:7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="the store as a last run left it")
    parser.add_argument("--only", default="", help="the pages whose address holds this text")
    arguments = parser.parse_args()
    main(arguments.database, arguments.rows, arguments.repeat, arguments.reuse, arguments.only)

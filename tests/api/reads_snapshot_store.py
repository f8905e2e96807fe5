"""The graph snapshot's store with what the other reads show, for tests/api/test_reads_snapshot.py.

``graph_snapshot_store`` has datasets, aliases, jobs, runs, edges and retirements with fixed
ids and times; the dataset detail, search and the run lists show more of each row than the
graph does. Added here, also with fixed ids and times: schemas (three fields each, one with
a description), descriptions, tags and owners (a hidden one), facets (one with a password
that must come out redacted), the jobs' links to dataset aliases (declared for a few), run
errors, nominal times, parents and tags, column lineage (facts and edges) and run facts.
"""

from django.db import connection

from tests.api import graph_snapshot_store

T0 = graph_snapshot_store.T0

EXTRA = [
    """INSERT INTO catalog_dataset_field (id, dataset_id, ordinal, name, type, description)
       SELECT (d - 1) * 3 + k + 1, d, k,
              (ARRAY['id', 'customer_email', 'amount_' || d])[k + 1],
              (ARRAY['BIGINT', 'TEXT', 'NUMERIC'])[k + 1],
              CASE WHEN k = 1 THEN 'The customer''s address, password=hunter2' ELSE '' END
       FROM generate_series(1, 60) AS d CROSS JOIN generate_series(0, 2) AS k ORDER BY 1""",
    """UPDATE catalog_dataset SET
         description = 'Orders of region ' || (id %% 4) || ', loaded nightly',
         tags = CASE WHEN id %% 5 = 0 THEN
                  '[{"key": "pii", "hidden": false}, {"key": "tier", "value": "gold",
                     "hidden": false}, {"key": "internal", "hidden": true}]'::jsonb
                ELSE '[]' END,
         owners = CASE WHEN id %% 6 = 0 THEN
                  '[{"name": "team-orders", "hidden": false}, {"name": "ghost", "hidden": true}]'
                  ::jsonb ELSE '[]' END,
         facets = CASE WHEN id = 45 THEN facets WHEN id %% 8 = 0 THEN
                  '{"documentation": {"description": "See the runbook"},
                    "storage": {"storageLayer": "delta", "fileFormat": "parquet"},
                    "datasource": {"name": "warehouse",
                                   "uri": "postgres://loader:s3cret@db1:5432/shop"}}'::jsonb
                ELSE facets END,
         lifecycle_state = CASE WHEN id = 9 THEN 'ALTER' ELSE lifecycle_state END""",
    """UPDATE catalog_job SET description = 'Task ' || id || ' of its DAG',
         tags = CASE WHEN id %% 4 = 0 THEN '[{"key": "pii", "hidden": false}]'::jsonb
                ELSE '[]' END""",
    # Each job edge as the job's link to the dataset's first alias; a few declared, and
    # for the datasets with a second alias, a link to that one too.
    """INSERT INTO catalog_job_dataset (id, job_id, alias_id, direction, declared, first_seen,
        last_seen)
       SELECT id, job_id, dataset_id, direction, (job_id + dataset_id) %% 13 = 0, first_seen,
              last_seen
       FROM catalog_job_edge ORDER BY id""",
    """INSERT INTO catalog_job_dataset (id, job_id, alias_id, direction, declared, first_seen,
        last_seen)
       SELECT 5000 + e.id, e.job_id, 100 + e.dataset_id, e.direction, false,
              e.first_seen - interval '1 day', e.last_seen + interval '1 day'
       FROM catalog_job_edge e WHERE e.dataset_id %% 7 = 0 ORDER BY e.id""",
    """UPDATE catalog_run SET
         error_message = CASE WHEN state = 'FAIL' THEN
                         'Task failed: connect postgres://etl:topsecret@db2/x refused' ELSE '' END,
         nominal_start_time = CASE WHEN id %% 3 = 0 THEN started_at END,
         nominal_end_time = CASE WHEN id %% 3 = 0 THEN ended_at END,
         ended_at = CASE WHEN state = 'RUNNING' THEN NULL ELSE ended_at END,
         tags = CASE WHEN id %% 11 = 0 THEN '[{"key": "env", "value": "prod",
                                              "hidden": false}]'::jsonb ELSE '[]' END,
         parent_run_id = CASE WHEN id %% 29 = 0 THEN 1 END,
         run_id_text = CASE WHEN id = 7 THEN 'scheduled__2026-10-31T00:00:00+00:00'
                       ELSE run_id_text END""",
    """INSERT INTO catalog_column_lineage_fact (id, run_id, source_alias_id, target_alias_id,
        source_field, target_field, transformation_type, transformation_subtype,
        transformation_description, masking, key_hash, first_seen, last_seen, dataset_level,
        field_transformation_description, field_transformation_type)
       SELECT i, 1 + i, 1 + i %% 10, 2 + i %% 5,
              (ARRAY['id', 'customer_email', 'amount'])[1 + i %% 3],
              CASE WHEN i %% 4 = 0 THEN '' ELSE (ARRAY['id', 'customer_email', 'total'])
                   [1 + i %% 3] END,
              CASE WHEN i %% 4 = 0 THEN 'INDIRECT' ELSE 'DIRECT' END,
              CASE WHEN i %% 4 = 0 THEN 'FILTER' ELSE 'IDENTITY' END, '', i %% 5 = 0,
              sha256(('c' || i)::bytea), %(t0)s::timestamptz - i * interval '1 hour',
              %(t0)s, i %% 4 = 0, '', ''
       FROM generate_series(1, 40) AS i ORDER BY i""",
    """INSERT INTO catalog_column_lineage_edge (id, source_id, target_id, job_id, source_field,
        target_field, transformation_type, transformation_subtype, transformation_description,
        masking, key_hash, first_seen, last_seen, run_count, last_run_id, dataset_level,
        field_transformation_description, field_transformation_type)
       SELECT f.id, f.source_alias_id, f.target_alias_id, r.job_id, f.source_field,
              f.target_field, f.transformation_type, f.transformation_subtype,
              CASE WHEN f.id %% 7 = 0 THEN 'SELECT * FROM x WHERE password = ''pw1''' ELSE ''
              END, f.masking, f.key_hash, f.first_seen, f.last_seen, 1 + f.id %% 3, f.run_id,
              f.dataset_level, '', ''
       FROM catalog_column_lineage_fact f JOIN catalog_run r ON r.id = f.run_id ORDER BY f.id""",
    """INSERT INTO catalog_run_dataset_facet (id, run_id, alias_id, direction, name, version,
        value)
       SELECT i, 1 + i, 1 + i %% 6, CASE WHEN i %% 2 = 0 THEN 'output' ELSE 'input' END,
              CASE WHEN i %% 3 = 0 THEN 'dataQualityAssertions'
                   WHEN i %% 2 = 0 THEN 'outputStatistics' ELSE 'inputStatistics' END, '1-0-0',
              CASE WHEN i %% 3 = 0 THEN
                   '{"assertions": [{"assertion": "not_null", "success": true,
                                     "column": "id"}]}'::jsonb
                   ELSE jsonb_build_object('rowCount', i * 10, 'size', i * 1024) END
       FROM generate_series(1, 36) AS i ORDER BY i""",
]


def build() -> None:
    graph_snapshot_store.build()
    with connection.cursor() as cursor:
        for statement in EXTRA:
            cursor.execute(statement, {"t0": T0})


def build_with_a_rule() -> None:
    """The store, and dataset 3's aliases named by an alias rule (their ``reason`` the rule,
    its slug shown): what the detail reads beside the store's own rows."""
    from catalog.models import AliasRule, DatasetAlias

    build()
    rule = AliasRule.objects.create(
        slug="lake-rename",
        action="rewrite",
        namespace="s3://old",
        name_pattern="(.*)",
        target_namespace="s3://lake",
        target_name="\\1",
    )
    DatasetAlias.objects.filter(dataset_id=3).update(reason="rule", reason_rule=rule)

"""A lineage store with fixed ids and times, for tests/api/test_graph_snapshot.py.

Written by SQL with explicit ids (identity columns take them), so the same store, and so
the same answers byte for byte, on every run whatever other tests' sequences did: 60
datasets (some with a second alias, one dropped, one a temporary job output), 30 jobs (a
DAG of three, one whose runs had pairs cut), 300 runs, three lineage edges out of each
dataset (cycles through the wrap), their job edges, run rows behind the edges out of the
first ten datasets, a retired dataset, a retired job, a retirement that was restored, and
two jobs' declared (static) lineage.
"""

from django.db import connection

T0 = "2026-11-01 00:00:00+00"

STORE = [
    """INSERT INTO catalog_job (id, namespace, name, key_hash, is_placeholder, facets,
        facet_versions, processing_type, job_type, integration, description, first_seen,
        last_seen, updated_at, parent_id, lineage_edges_cut, tags, owners)
       SELECT i, 'airflow', 'dag_' || (i %% 5) || '.task_' || i,
              sha256('airflow'::bytea || decode('00', 'hex')
                     || convert_to('dag_' || (i %% 5) || '.task_' || i, 'UTF8')),
              false, '{}', '{}', 'BATCH', 'TASK',
              'AIRFLOW', '', %(t0)s::timestamptz - interval '30 days' + i * interval '1 minute',
              %(t0)s::timestamptz + i * interval '1 hour', %(t0)s,
              CASE WHEN i IN (2, 3) THEN 1 END, i = 7, '[]', '[]'
       FROM generate_series(1, 30) AS i ORDER BY i""",
    """INSERT INTO catalog_run (id, run_uuid, run_id_text, job_id, is_placeholder, state,
        state_version, started_at, ended_at, error_message, is_streaming, facets,
        facet_versions, job_version, updated_at, first_event_time, last_event_time,
        shares_run_id, tags)
       SELECT i, md5('r' || i)::uuid, md5('r' || i)::uuid::text, 1 + i %% 30, false,
              CASE WHEN i %% 10 = 0 THEN 'FAIL' WHEN i %% 17 = 0 THEN 'RUNNING'
                   ELSE 'COMPLETE' END, '[]',
              %(t0)s::timestamptz - i * interval '1 hour',
              %(t0)s::timestamptz - i * interval '1 hour' + interval '5 minutes', '', false,
              '{}', '{}', '[]', %(t0)s, %(t0)s::timestamptz - i * interval '1 hour',
              %(t0)s::timestamptz - i * interval '1 hour' + interval '5 minutes', false, '[]'
       FROM generate_series(1, 300) AS i ORDER BY i""",
    """INSERT INTO catalog_dataset (id, namespace, name, facets, facet_versions, description,
        lifecycle_state, is_dropped, first_seen, last_seen, updated_at, display_rank, tags,
        owners, browse_path)
       SELECT i, 'postgres://db' || (i %% 3) || ':5432', 'schema_' || (i %% 4) || '.table_' || i,
              CASE WHEN i = 45 THEN '{"datasetType": {"datasetType": "JOB_OUTPUT",
                   "subType": "TEMPORARY"}}'::jsonb ELSE '{}' END, '{}', '', '', i %% 23 = 0,
              %(t0)s::timestamptz - interval '20 days' + i * interval '1 second',
              %(t0)s::timestamptz + i * interval '1 minute', %(t0)s, 2, '[]', '[]', ''
       FROM generate_series(1, 60) AS i ORDER BY i""",
    """INSERT INTO catalog_dataset_alias (id, namespace, name, key_hash, dataset_id, reason,
        reason_detail, reason_version, first_seen, last_seen, is_table_name)
       SELECT id, namespace, name, sha256(convert_to(namespace, 'UTF8') || decode('00', 'hex')
              || convert_to(name, 'UTF8')), id, 'event',
              '', '[]', first_seen, last_seen, false
       FROM catalog_dataset ORDER BY id""",
    """INSERT INTO catalog_dataset_alias (id, namespace, name, key_hash, dataset_id, reason,
        reason_detail, reason_version, first_seen, last_seen, is_table_name)
       SELECT 100 + id, 'hive://metastore', 'warehouse.t' || id,
              sha256(convert_to('hive://metastore', 'UTF8') || decode('00', 'hex')
              || convert_to('warehouse.t' || id, 'UTF8')), id, 'symlink', 'TABLE', '[]',
              first_seen, last_seen, false
       FROM catalog_dataset WHERE id %% 7 = 0 ORDER BY id""",
    """INSERT INTO catalog_lineage_edge (id, source_id, target_id, job_id, first_seen,
        last_seen, last_run_id, run_count, lineage_type, pipeline)
       SELECT (i - 1) * 3 + k + 1, i, 1 + ((i + k * 7 + (i %% 5) * 11) %% 60),
              1 + (i * 3 + k) %% 30, %(t0)s::timestamptz - i * interval '1 hour',
              %(t0)s::timestamptz + k * interval '1 hour', 1 + (i * 3 + k) %% 300, 1,
              CASE WHEN i %% 9 = 0 THEN 'TABLE' ELSE '' END, ''
       FROM generate_series(1, 60) AS i CROSS JOIN generate_series(0, 2) AS k
       ORDER BY i, k ON CONFLICT DO NOTHING""",
    """INSERT INTO catalog_job_edge (id, job_id, dataset_id, direction, first_seen, last_seen,
        run_count, last_run_id, via, completed_run_count)
       SELECT row_number() OVER (ORDER BY job_id, dataset_id, direction), job_id, dataset_id,
              direction, first, last, 1, run,
              CASE WHEN (job_id + dataset_id) %% 11 = 0 THEN 'column_lineage' ELSE '' END, 1
       FROM (SELECT job_id, source_id AS dataset_id, 'input' AS direction,
                    min(first_seen) AS first, max(last_seen) AS last, max(last_run_id) AS run
             FROM catalog_lineage_edge GROUP BY job_id, source_id
             UNION ALL
             SELECT job_id, target_id, 'output', min(first_seen), max(last_seen),
                    max(last_run_id)
             FROM catalog_lineage_edge GROUP BY job_id, target_id) AS halves""",
    # A reader that writes nothing (a check) and a writer that reads nothing (a loader).
    """INSERT INTO catalog_job_edge (id, job_id, dataset_id, direction, first_seen, last_seen,
        run_count, last_run_id, via, completed_run_count)
       VALUES (1001, 20, 4, 'input', %(t0)s, %(t0)s, 1, 20, '', 1),
              (1002, 21, 5, 'output', %(t0)s, %(t0)s, 1, 21, '', 0)""",
    """INSERT INTO catalog_lineage_edge_run (id, edge_id, run_id, first_seen, last_seen,
        completed)
       SELECT row_number() OVER (ORDER BY e.id, r.id), e.id, r.id, r.started_at, r.ended_at,
              r.state = 'COMPLETE'
       FROM catalog_lineage_edge e JOIN catalog_run r ON r.job_id = e.job_id
       WHERE e.source_id <= 10""",
    """INSERT INTO catalog_job_edge_run (id, edge_id, run_id, first_seen, last_seen, via,
        completed)
       SELECT row_number() OVER (ORDER BY je.id, er.run_id), je.id, er.run_id,
              min(er.first_seen), max(er.last_seen), '', bool_or(er.completed)
       FROM catalog_lineage_edge_run er JOIN catalog_lineage_edge e ON e.id = er.edge_id
       JOIN catalog_job_edge je ON je.job_id = e.job_id
        AND ((je.direction = 'input' AND je.dataset_id = e.source_id)
             OR (je.direction = 'output' AND je.dataset_id = e.target_id))
       GROUP BY je.id, er.run_id""",
    """UPDATE catalog_job_edge e
       SET run_count = h.runs, completed_run_count = h.done, first_seen = h.first,
           last_seen = h.last, last_run_id = h.run
       FROM (SELECT edge_id, count(*) AS runs, count(*) FILTER (WHERE completed) AS done,
                    min(first_seen) AS first, max(last_seen) AS last,
                    (array_agg(run_id ORDER BY last_seen DESC, run_id))[1] AS run
             FROM catalog_job_edge_run GROUP BY edge_id) h
       WHERE e.id = h.edge_id""",
    """INSERT INTO catalog_retirement (id, kind, object_id, namespace, retired_at, retired_by,
        reason, restored_at, restored_by)
       VALUES (1, 1, 40, '', %(t0)s, 'steward', 'gone', NULL, ''),
              (2, 2, 12, '', %(t0)s, 'steward', 'gone', NULL, ''),
              (3, 1, 41, '', %(t0)s, 'steward', 'back', %(t0)s, 'steward')""",
    """INSERT INTO ingest_event (id, received_at, kind, event_type, event_time, run_id,
        job_namespace, job_name, producer, payload, digest, derivation_status)
       VALUES (1, %(t0)s, 'job', '', %(t0)s, '', 'airflow', 'dag_4.task_29', 'test',
               '{}', sha256('static'::bytea), 'derived')""",
    """INSERT INTO catalog_static_lineage (id, version, declared_at, event_id, job_id)
       VALUES (1, 'v1', %(t0)s::timestamptz - interval '2 hours', 1, 29),
              (2, 'v1', %(t0)s::timestamptz - interval '1 hour', 1, 30)""",
    """INSERT INTO catalog_static_dataset (id, direction, via, alias_id, job_id)
       VALUES (1, 'input', '', 10, 29), (2, 'output', '', 55, 29),
              (3, 'input', '', 1, 30), (4, 'output', 'column_lineage', 2, 30)""",
]


def build() -> None:
    with connection.cursor() as cursor:
        for statement in STORE:
            cursor.execute(statement, {"t0": T0})

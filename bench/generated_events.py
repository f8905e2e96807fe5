"""The generated raw events of the big benchmark stores (bench/read.py, bench/scale_curve.py).

One statement writes events ``first + 1 .. last`` of a generated log straight into
ingest_event (``INSERT ... SELECT generate_series``, never through HTTP), so a store can be
built in one go or grown, and resumed, from the id it reached. Event ``i`` is a Spark run
event of about 1.4 KB of compact JSON (the size issue 42 quotes for a realistic event: a
parent-run facet, one input and one output with their schemas) at 2026-01-01 plus ``i``
seconds, so the log's times grow with its ids whether it was built at once or in steps.
Two events (START, COMPLETE) a run; ``%(jobs)s`` jobs. The rows are stored derived: the
catalog the benches read is generated beside them.
"""

from typing import Any

EVENTS = """
INSERT INTO ingest_event (received_at, kind, event_type, event_time, run_id, job_namespace,
    job_name, producer, payload, digest, derivation_status)
SELECT g.at, 'run', g.type, g.at, g.run, 'spark', g.job, g.producer,
       jsonb_build_object(
         'eventType', g.type,
         'eventTime', to_char(g.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'producer', g.producer, 'schemaURL', g.schema,
         'run', jsonb_build_object('runId', g.run, 'facets', jsonb_build_object(
           'parent', jsonb_build_object('_producer', g.producer,
             '_schemaURL', 'https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json',
             'run', jsonb_build_object('runId', md5('parent' || (g.i / 20))::uuid),
             'job', jsonb_build_object('namespace', 'airflow', 'name', 'dag_' || (g.i %% 500))))),
         'job', jsonb_build_object('namespace', 'spark', 'name', g.job, 'facets', '{}'::jsonb),
         'inputs', jsonb_build_array(jsonb_build_object('namespace', 's3://lake',
           'name', 'raw/orders_' || (g.i %% %(jobs)s),
           'facets', jsonb_build_object('schema', jsonb_build_object('_producer', g.producer,
             '_schemaURL', 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json',
             'fields', jsonb_build_array(
               jsonb_build_object('name', 'order_id', 'type', 'long'),
               jsonb_build_object('name', 'customer_id', 'type', 'long'),
               jsonb_build_object('name', 'amount', 'type', 'decimal(12,2)'),
               jsonb_build_object('name', 'created_at', 'type', 'timestamp')))))),
         'outputs', jsonb_build_array(jsonb_build_object('namespace', 's3://lake',
           'name', 'mart/orders_daily_' || (g.i %% %(jobs)s),
           'facets', jsonb_build_object('schema', jsonb_build_object('_producer', g.producer,
             '_schemaURL', 'https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json',
             'fields', jsonb_build_array(
               jsonb_build_object('name', 'day', 'type', 'date'),
               jsonb_build_object('name', 'orders', 'type', 'long'),
               jsonb_build_object('name', 'amount', 'type', 'decimal(14,2)'))))))),
       sha256(int8send(g.i)), 'derived'
FROM (SELECT i, timestamptz '2026-01-01 00:00:00+00' + make_interval(secs => i) AS at,
             (ARRAY['START', 'COMPLETE'])[1 + i %% 2] AS type,
             md5((i / 2)::text)::uuid::text AS run,
             'dag_' || (i %% 500) || '.task_' || (i %% %(jobs)s) AS job,
             'https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark'
               AS producer,
             'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent' AS schema
      FROM generate_series(%(first)s + 1, %(last)s) AS i) AS g
"""


def insert_events(connection: Any, first: int, last: int, jobs: int, step: int) -> None:
    """Events ``first + 1 .. last``, ``step`` a statement (autocommit: a transaction each)."""
    while first < last:
        stop = min(last, first + step)
        connection.execute(EVENTS, {"first": first, "last": stop, "jobs": jobs})
        first = stop

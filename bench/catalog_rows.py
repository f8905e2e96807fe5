"""Catalog rows written straight by SQL for the benches that build one wide run
(bench/run_links.py, bench/run_events.py): a job, and a completed run of it."""

# A job of the ``bench`` namespace named ``%(name)s``, its key as derivation writes it.
JOB = """
INSERT INTO catalog_job (namespace, name, key_hash, is_placeholder, facets, facet_versions,
    description, first_seen, last_seen, updated_at, job_type, integration, processing_type,
    tags, owners)
VALUES ('bench', %(name)s, sha256(convert_to('bench', 'UTF8') || '\\x00'::bytea
    || convert_to(%(name)s, 'UTF8')), false, '{}', '{}', '', now(), now(), now(), '', '',
    '', '[]', '[]')
RETURNING id
"""

# A completed run ``%(run)s`` of job ``%(job)s``, started ``%(age)s`` ago (an interval),
# streaming or not (``%(streaming)s``).
RUN = """
INSERT INTO catalog_run (run_uuid, run_id_text, job_id, is_placeholder, state, state_version,
    started_at, ended_at, first_event_time, last_event_time, error_message, is_streaming,
    facets, facet_versions, job_version, updated_at, shares_run_id, tags)
VALUES (%(run)s::uuid, %(run)s::text, %(job)s, false, 'COMPLETE', '[]',
    now() - %(age)s::interval, now(), now() - %(age)s::interval, now(), '', %(streaming)s,
    '{}', '{}', '[]', now(), false, '[]')
RETURNING id
"""

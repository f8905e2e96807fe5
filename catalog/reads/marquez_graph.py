"""What the Marquez mount's ``/lineage`` reads besides the walk: its root by name, its nodes'
whole rows, and their facts, one statement each.

The root is found by its name (a Marquez node id names it), as ``find_job`` and
``find_dataset`` find it, and handed to the walk by id: the walk's root check reads the
store's two facts it is planned by (ADR 0104), anew on every request.

The drawn nodes are read as rows of the columns Marquez shows (``node_rows``), not as model
instances: a graph of two hundred nodes spent more Python building ``Job`` and ``Dataset``
instances (every column, every JSON column parsed) than shaping them, and the jobs' parents,
joined by ``select_related``, were planned as a hash join over the whole job table (ADR
0118). ``api.marquez.shapes`` reads a row as it reads an instance.

The nodes' facts (a job's latest run, what it read and wrote; a dataset's schema fields and
newest write) are one statement per kind of node, where they were two (ADR 0116): each is
a round trip and a plan, which cost a graph of a hundred nodes more than the reads did.

Each statement here is one fixed text, its ids one array literal sent as a parameter, read
through ``core.prepared.read_rows``: prepared on a kept connection and run on the cursor kept
with it, planned once there, not on every request (planning them was ~2.2 ms of a small
graph's ~12 ms of PostgreSQL CPU; each generic plan, probes by id, is no slower than the
custom ones at the 1M store; ADR 0134).
"""

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection

from catalog.models import writes
from catalog.models.identity import compiled_rules
from catalog.names import naming
from catalog.names.rules import RuleSet, alias_key
from catalog.reads.jobs import LatestRun, Named
from core import sql_timestamps
from core.prepared import read_rows
from core.sql_arrays import bigint_array

# A statement and its values, as ``core.prepared.read_rows`` takes them.
Read = tuple[str, dict[str, Any]]

# The root by its name in one statement (ADR 0134): the dataset alias under the key the name
# has with no rule applied, and the enabled alias rules, in application order (as
# ``AliasRule.objects.rule_set`` reads them). Most stores have no rule: that alias is the
# answer. The rules as text: Django's cursor reads json as text, a server-binding one not.
_DATASET_ROOT = """
SELECT (SELECT a.dataset_id FROM catalog_dataset_alias a WHERE a.key_hash = %(key)s
        ORDER BY a.namespace, a.name LIMIT 1),
       (SELECT json_agg(json_build_object(
            'id', r.id, 'slug', r.slug, 'action', r.action, 'namespace', r.namespace,
            'name_pattern', r.name_pattern, 'target_namespace', r.target_namespace,
            'target_name', r.target_name) ORDER BY r.priority, r.slug)::text
        FROM catalog_alias_rule r WHERE r.enabled)
"""
# ``catalog_job_key_uniq``: at most one job has a key.
_JOB_ROOT = "SELECT j.id FROM catalog_job j WHERE j.key_hash = %(key)s"


def root_id(kind: str, namespace: str, name: str) -> int | None:
    """The id of the job or dataset (``kind``) of that name, as ``find_job`` and
    ``find_dataset`` find it (a dataset by any name it was called, the rules applied); None
    when there is none. Whether it is retired is the walk's root check's to say (it reads
    the root by id, ``UnknownNode`` for a retired one, with the store's facts): the
    retirement is not read twice (ADR 0118).

    One statement of a fixed text, prepared on a kept connection (``read_rows``), where
    the ORM compiled two per request (the rules, then the alias): ~1.9 ms of Python, more
    than PostgreSQL spent on them (ADR 0134). Only when a rule rewrites the name is the
    alias read again, under the key with the rules applied: two statements, as before."""
    if kind == "job":
        rows = read_rows(_JOB_ROOT, {"key": naming.job_key(namespace, name)})
        return rows[0][0] if rows else None
    plain = alias_key(namespace, name, RuleSet([]))
    ((found, rules),) = read_rows(_DATASET_ROOT, {"key": plain})
    if rules is None:
        return found
    key = alias_key(namespace, name, compiled_rules(_Rule(**rule) for rule in json.loads(rules)))
    if key == plain:
        return found
    return read_rows(_DATASET_ROOT, {"key": key})[0][0]


@dataclass(slots=True)
class _Rule:
    """An enabled alias rule's fields ``compile_rule`` reads, from ``_DATASET_ROOT``."""

    id: int
    slug: str
    action: str
    namespace: str
    name_pattern: str
    target_namespace: str
    target_name: str


# Not frozen: a frozen dataclass sets each field through ``object.__setattr__``, ~2.5 µs a
# row of eleven, and the 1M store's graph reads ~3,100 of them (ADR 0129). Nothing writes one.
@dataclass(slots=True)
class NodeRow:
    """The columns a Marquez Dataset and Job both show, in the statement's order; the
    moments as the answer writes them (``core.sql_timestamps``, ADR 0129)."""

    id: int
    namespace: str
    name: str
    facets: Any
    tags: Any
    description: str
    first_seen: str | None
    last_seen: str | None
    updated_at: str


@dataclass(slots=True)
class DatasetRow(NodeRow):
    """The columns of a dataset a Marquez Dataset shows (``shapes.dataset_data`` reads it as
    it reads a ``Dataset``)."""

    lifecycle_state: str
    is_dropped: bool


@dataclass(slots=True)
class JobRow(NodeRow):
    """The columns of a job a Marquez Job shows, with its parent's name (``parent``: None
    for a job without one); ``shapes.jobs_data`` reads it as it reads a ``Job``."""

    processing_type: str
    parent: Named | None


@dataclass(frozen=True)
class NodeRows:
    datasets: list[DatasetRow]  # by id
    jobs: list[JobRow]  # by id


# Kind 0 a dataset, 1 a job with its parent's name: the parent is probed by its primary key
# (OFFSET 0 keeps the lateral read a probe per job; joined, it was planned as a hash join
# over the whole job table, ADR 0116's "Not yet").
_NODE_ROWS = """
SELECT 0, d.id, d.namespace, d.name, d.facets, d.tags, d.description, {moment:d.first_seen},
       {moment:d.last_seen}, {moment:d.updated_at}, d.lifecycle_state, d.is_dropped,
       NULL::text, NULL::text
FROM catalog_dataset d WHERE d.id = ANY(%(datasets)s::bigint[])
UNION ALL
SELECT 1, j.id, j.namespace, j.name, j.facets, j.tags, j.description, {moment:j.first_seen},
       {moment:j.last_seen}, {moment:j.updated_at}, j.processing_type, NULL, p.namespace,
       p.name
FROM catalog_job j
LEFT JOIN LATERAL (
    SELECT p.namespace, p.name FROM catalog_job p WHERE p.id = j.parent_id OFFSET 0
) p ON true
WHERE j.id = ANY(%(jobs)s::bigint[])
ORDER BY 1, 2
"""
_NODE_ROWS_WRITTEN = sql_timestamps.written(_NODE_ROWS)


# Most nodes' facets and tags are empty: their text is not parsed (a new one each, as parsed).
_EMPTY: dict[Any, type] = {"{}": dict, "[]": list}


def _json(value: Any) -> Any:
    """jsonb comes as text on Django's connections: parsed as its JSONField parses it."""
    if not isinstance(value, str | bytes):
        return value
    empty = _EMPTY.get(value)
    return empty() if empty is not None else json.loads(value)


def node_rows(dataset_ids: list[int], job_ids: list[int]) -> NodeRows:
    """The datasets' and jobs' rows (each once, by id): one statement, none for no node."""
    read = node_rows_read(dataset_ids, job_ids)
    return node_rows_of(read_rows(*read) if read else [])


def node_rows_read(dataset_ids: list[int], job_ids: list[int]) -> Read | None:
    """``node_rows``' statement and its values (None for no node): for a caller that sends
    it with others in one round trip (``core.pipelined_reads``, ADR 0140)."""
    if not (dataset_ids or job_ids):
        return None
    return (
        _NODE_ROWS_WRITTEN[sql_timestamps.date_style_is_iso(connection)],
        {"datasets": bigint_array(dataset_ids), "jobs": bigint_array(job_ids)},
    )


def node_rows_of(rows: list[Any]) -> NodeRows:
    """``node_rows`` from its statement's rows."""
    datasets: list[DatasetRow] = []
    jobs: list[JobRow] = []
    for kind, key, namespace, name, facets, tags, described, first, last, updated, *rest in rows:
        state_or_type, dropped, parent_ns, parent = rest
        # The columns both kinds show, in both rows' order; then each kind's last one.
        shown = (key, namespace, name, _json(facets), _json(tags), described, first, last)
        if kind == 0:
            datasets.append(DatasetRow(*shown, updated, state_or_type, dropped))
        else:
            parent_name = (parent_ns, parent) if parent is not None else None
            jobs.append(JobRow(*shown, updated, state_or_type, parent_name))
    return NodeRows(datasets, jobs)


@dataclass(frozen=True)
class JobFacts:
    """Each job's newest started runs, newest first, and what it read (``input``) and wrote
    (``output``) by dataset name."""

    latest_runs: dict[int, list[LatestRun]]
    datasets: dict[int, dict[str, list[Named]]]


# Part 0: each job's newest %(runs)s started runs, one index range per job
# (catalog_run_job_started_idx); part 1: what the jobs read and wrote by dataset name, once
# per (job, direction, dataset name), at most %(limit)s in all in that order. The columns a
# Marquez Run shows (LatestRun), then the link's three.
_JOB_FACTS = """
SELECT part, job_id, id, run_uuid::text, state, {moment:started_at}, {moment:ended_at}, duration,
       {moment:nominal_start_time}, {moment:nominal_end_time}, {moment:first_event_time},
       {moment:last_event_time}, {moment:updated_at}, facets, direction, namespace, name
FROM (
    SELECT 0 AS part, j.id AS job_id, r.id, r.run_uuid, r.state, r.started_at,
           r.ended_at, r.duration, r.nominal_start_time, r.nominal_end_time,
           r.first_event_time, r.last_event_time, r.updated_at, r.facets,
           NULL::text AS direction, NULL::text AS namespace, NULL::text AS name
    FROM unnest(%(jobs)s::bigint[]) AS j(id) CROSS JOIN LATERAL (
        SELECT * FROM catalog_run r WHERE r.job_id = j.id AND r.started_at IS NOT NULL
        ORDER BY r.started_at DESC NULLS LAST, r.id DESC LIMIT %(runs)s) r
    UNION ALL
    (SELECT DISTINCT 1, jd.job_id, NULL::bigint, NULL::uuid, NULL::text,
            NULL::timestamptz, NULL::timestamptz, NULL::interval, NULL::timestamptz,
            NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz,
            NULL::jsonb, jd.direction, d.namespace, d.name
     FROM catalog_job_dataset jd
     JOIN catalog_dataset_alias a ON a.id = jd.alias_id
     JOIN catalog_dataset d ON d.id = a.dataset_id
     WHERE jd.job_id = ANY(%(jobs)s::bigint[])
     ORDER BY jd.job_id, jd.direction, d.namespace, d.name
     LIMIT %(limit)s)
) facts
ORDER BY part, job_id, facts.started_at DESC, id DESC, direction, namespace, name
"""
_JOB_FACTS_WRITTEN = sql_timestamps.written(_JOB_FACTS)


def job_facts(job_ids: list[int], runs: int, limit: int) -> JobFacts:
    """The jobs' ``runs`` newest started runs (rows, not ``Run`` instances: ADR 0110) and
    their links by dataset name (at most ``limit``): one statement, none for no job."""
    read = job_facts_read(job_ids, runs, limit)
    return job_facts_of(read_rows(*read) if read else [])


def job_facts_read(job_ids: list[int], runs: int, limit: int) -> Read | None:
    """``job_facts``' statement and its values (None for no job), as ``node_rows_read``."""
    if not job_ids:
        return None
    return (
        _JOB_FACTS_WRITTEN[sql_timestamps.date_style_is_iso(connection)],
        {"jobs": bigint_array(job_ids), "runs": runs, "limit": limit},
    )


def job_facts_of(rows: list[Any]) -> JobFacts:
    """``job_facts`` from its statement's rows."""
    latest: dict[int, list[LatestRun]] = defaultdict(list)
    io: dict[int, dict[str, list[Named]]] = defaultdict(lambda: {"input": [], "output": []})
    for part, job_id, *run, facets, direction, namespace, name in rows:
        if part == 1:
            io[job_id][direction].append((namespace, name))
            continue
        latest[job_id].append(LatestRun(run[0], job_id, *run[1:], facets=_json(facets)))  # type: ignore[misc]
    return JobFacts(latest, io)


@dataclass(frozen=True)
class DatasetFacts:
    """Each dataset's schema fields in order (``name``, ``type``, ``description``) and its
    newest write: (when, as the answer writes it; the writing run's runId)."""

    fields: dict[int, list[tuple[str, str, str]]]
    latest_writes: dict[int, tuple[str, str]]


# Part 0: the fields in schema order; part 1: each dataset's newest write, a completed run's
# output that is a write (catalog.models.writes, ADR 0069), newest last_seen then id first.
_DATASET_FACTS = """
SELECT part, dataset_id, name, type, description, {moment:last_seen}, run_uuid::text
FROM (
    SELECT 0 AS part, f.dataset_id, f.ordinal AS k1, f.name, f.type,
           f.description, NULL::timestamptz AS last_seen, NULL::uuid AS run_uuid
    FROM catalog_dataset_field f WHERE f.dataset_id = ANY(%(datasets)s::bigint[])
    UNION ALL
    (SELECT DISTINCT ON (a.dataset_id) 1, a.dataset_id, NULL, NULL, NULL, NULL,
            rd.last_seen, r.run_uuid
     FROM catalog_run_dataset rd
     JOIN catalog_dataset_alias a ON a.id = rd.alias_id
     JOIN catalog_run r ON r.id = rd.run_id
     WHERE a.dataset_id = ANY(%(datasets)s::bigint[]) AND rd.direction = 'output'
       AND {write}
     ORDER BY a.dataset_id, rd.last_seen DESC, rd.id DESC)
) facts
ORDER BY part, dataset_id, k1
""".replace("{write}", writes.write_sql("r", "rd"))
_DATASET_FACTS_WRITTEN = sql_timestamps.written(_DATASET_FACTS)


def dataset_facts(dataset_ids: list[int]) -> DatasetFacts:
    """The datasets' fields and newest writes: one statement, none for no dataset."""
    read = dataset_facts_read(dataset_ids)
    return dataset_facts_of(read_rows(*read) if read else [])


def dataset_facts_read(dataset_ids: list[int]) -> Read | None:
    """``dataset_facts``' statement and its values (None for no dataset), as
    ``node_rows_read``."""
    if not dataset_ids:
        return None
    return (
        _DATASET_FACTS_WRITTEN[sql_timestamps.date_style_is_iso(connection)],
        {"datasets": bigint_array(dataset_ids)},
    )


def dataset_facts_of(rows: list[Any]) -> DatasetFacts:
    """``dataset_facts`` from its statement's rows."""
    fields: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    latest: dict[int, tuple[str, str]] = {}
    for part, dataset_id, name, kind, description, last_seen, run_uuid in rows:
        if part == 0:
            fields[dataset_id].append((name, kind, description))
        else:
            latest[dataset_id] = (last_seen, run_uuid)
    return DatasetFacts(fields, latest)

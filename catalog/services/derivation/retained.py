"""What retention keeps of removed runs and events, and how derivation folds it back in
(ADR 0079).

Retention (``catalog.services.retention``) calls ``keep_runs`` and ``keep_aliases`` in the
transaction that removes the rows, so a summary and the removal commit together. Keys are
the job's and the aliases' ``key_hash`` (natural keys): an alias never merges, so a summary
follows its alias into whatever dataset holds it now, across merges and full rederives.

Derivation reads them back in two places:
- an edge recomputed from all its runs (a run left it: merge, job moved) adds its
  summary (``EDGE_SUMMARY``/``JOB_EDGE_SUMMARY``, used by ``edge_runs.EdgeRuns``);
- a full rederive derives the summarised jobs, aliases, links and control edges first, as
  a batch of facts (``retained_facts``), and folds the summarised edges in last
  (``restore_edges``), when every dataset they name exists: the same graph, with the same
  ids (ADR 0077).
"""

from datetime import datetime
from typing import Any

import orjson
from django.db import connection

from catalog.models.writes import newest_window_sql
from catalog.names.rules import RuleSet
from catalog.services.derivation.control_edges import newer_wins
from catalog.services.derivation.records import (
    REASON_RANK,
    AliasFact,
    ControlFact,
    Facts,
    JobFact,
)

# The alias a dataset is summarised under: its display name's, else its oldest alias; one
# an event named before one a steward's rule made (a removed rule would not make it again).
_DISPLAY_ALIAS = """LATERAL (
    SELECT key_hash FROM catalog_dataset_alias a
    WHERE a.dataset_id = {dataset}.id
    ORDER BY a.reason = 'rule', (a.namespace = {dataset}.namespace AND a.name = {dataset}.name)
             DESC, a.id
    LIMIT 1
) {alias}"""


def _display(dataset: str, alias: str) -> str:
    return _DISPLAY_ALIAS.format(dataset=dataset, alias=alias)


_SPAN_UPDATE = """
    first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen),
    run_count = t.run_count + EXCLUDED.run_count,
    completed_run_count = t.completed_run_count + EXCLUDED.completed_run_count"""
_KEEP_EDGES = f"""
INSERT INTO catalog_retained_edge AS t
    (job_key, source_key, target_key, first_seen, last_seen, run_count, completed_run_count)
SELECT j.key_hash, sa.key_hash, ta.key_hash, MIN(er.first_seen), MAX(er.last_seen),
       COUNT(*), COUNT(*) FILTER (WHERE er.completed)
FROM catalog_lineage_edge_run er
JOIN catalog_lineage_edge e ON e.id = er.edge_id
JOIN catalog_job j ON j.id = e.job_id
JOIN catalog_dataset s ON s.id = e.source_id
JOIN catalog_dataset d ON d.id = e.target_id
CROSS JOIN {_display("s", "sa")}
CROSS JOIN {_display("d", "ta")}
WHERE er.run_id = ANY(%(runs)s)
GROUP BY 1, 2, 3
ON CONFLICT (job_key, source_key, target_key) DO UPDATE SET {_SPAN_UPDATE}
"""
_KEEP_JOB_EDGES = f"""
INSERT INTO catalog_retained_job_edge AS t
    (job_key, dataset_key, direction, first_seen, last_seen, run_count, completed_run_count)
SELECT j.key_hash, da.key_hash, e.direction, MIN(er.first_seen), MAX(er.last_seen),
       COUNT(*), COUNT(*) FILTER (WHERE er.completed)
FROM catalog_job_edge_run er
JOIN catalog_job_edge e ON e.id = er.edge_id
JOIN catalog_job j ON j.id = e.job_id
JOIN catalog_dataset d ON d.id = e.dataset_id
CROSS JOIN {_display("d", "da")}
WHERE er.run_id = ANY(%(runs)s)
GROUP BY 1, 2, 3
ON CONFLICT (job_key, dataset_key, direction) DO UPDATE SET {_SPAN_UPDATE}
"""
_KEEP_JOB_DATASETS = """
INSERT INTO catalog_retained_job_dataset AS t
    (job_key, alias_key, direction, first_seen, last_seen)
SELECT j.key_hash, a.key_hash, rd.direction, MIN(rd.first_seen), MAX(rd.last_seen)
FROM catalog_run_dataset rd
JOIN catalog_run r ON r.id = rd.run_id
JOIN catalog_job j ON j.id = r.job_id
JOIN catalog_dataset_alias a ON a.id = rd.alias_id
WHERE rd.run_id = ANY(%(runs)s)
GROUP BY 1, 2, 3
ON CONFLICT (job_key, alias_key, direction) DO UPDATE SET
    first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen)
"""
_COLUMNS = """target_field, source_field, transformation_type, transformation_subtype,
    transformation_description, masking, dataset_level, field_transformation_type,
    field_transformation_description"""
# The text columns follow from key_hash (their digest): MIN() names the one value.
_COLUMN_VALUES = """MIN(f.target_field), MIN(f.source_field), MIN(f.transformation_type),
    MIN(f.transformation_subtype), MIN(f.transformation_description), BOOL_OR(f.masking),
    BOOL_OR(f.dataset_level), MIN(f.field_transformation_type),
    MIN(f.field_transformation_description)"""
_KEEP_COLUMN_EDGES = f"""
INSERT INTO catalog_retained_column_edge AS t (job_key, target_key, source_key, key_hash,
    {_COLUMNS}, first_seen, last_seen, run_count)
SELECT j.key_hash, ta.key_hash, sa.key_hash, f.key_hash, {_COLUMN_VALUES},
       MIN(f.first_seen), MAX(f.last_seen), COUNT(DISTINCT f.run_id)
FROM catalog_column_lineage_fact f
JOIN catalog_run r ON r.id = f.run_id
JOIN catalog_job j ON j.id = r.job_id
JOIN catalog_dataset_alias ta ON ta.id = f.target_alias_id
JOIN catalog_dataset_alias sa ON sa.id = f.source_alias_id
WHERE f.run_id = ANY(%(runs)s) AND r.id = ANY(%(runs)s)
  -- What the run's column edges held: a snapshot run's newest window (ADR 0091).
  AND {newest_window_sql("f.run_id", "f.last_seen")}
GROUP BY j.key_hash, ta.key_hash, sa.key_hash, f.key_hash
ON CONFLICT (job_key, target_key, source_key, key_hash) DO UPDATE SET
    first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen),
    run_count = t.run_count + EXCLUDED.run_count
"""
# The summaries' column edges, through the aliases' datasets now, added to the stored
# ones: for the (target dataset, job) pairs a recompute rebuilt, or all (a rederive).
_ADD_COLUMN_EDGES = f"""
INSERT INTO catalog_column_lineage_edge AS e (target_id, source_id, job_id, key_hash,
    {_COLUMNS}, first_seen, last_seen, run_count)
SELECT ta.dataset_id, sa.dataset_id, j.id, f.key_hash, {_COLUMN_VALUES},
       MIN(f.first_seen), MAX(f.last_seen), SUM(f.run_count)
FROM catalog_retained_column_edge f
JOIN catalog_job j ON j.key_hash = f.job_key
JOIN catalog_dataset_alias ta ON ta.key_hash = f.target_key AND ta.dataset_id IS NOT NULL
JOIN catalog_dataset_alias sa ON sa.key_hash = f.source_key AND sa.dataset_id IS NOT NULL
WHERE {{pairs}}
GROUP BY ta.dataset_id, sa.dataset_id, j.id, f.key_hash
ORDER BY 1, 2, 3, 4
ON CONFLICT (target_id, source_id, job_id, key_hash) DO UPDATE SET
    first_seen = LEAST(e.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen),
    run_count = e.run_count + EXCLUDED.run_count
"""
_ADD_COLUMN_EDGES_OF = _ADD_COLUMN_EDGES.replace(
    "{pairs}",
    "(ta.dataset_id, j.id) IN (SELECT * FROM unnest(%s::bigint[], %s::bigint[]))",
)
_RESTORE_COLUMN_EDGES = _ADD_COLUMN_EDGES.replace("{pairs}", "true")
# The jobs of removed runs, and the jobs at the other end of their control edges.
_RUN_JOBS = "SELECT job_id FROM catalog_run WHERE id = ANY(%(runs)s)"
_CONTROL_PARTNERS = f"""
SELECT upstream_id FROM catalog_control_edge WHERE downstream_id IN ({_RUN_JOBS})
UNION SELECT downstream_id FROM catalog_control_edge WHERE upstream_id IN ({_RUN_JOBS})"""
# Every control edge of the removed runs' jobs as the catalog holds it now (a run of J
# states only edges that end at J): a snapshot folds all its stating events so far, so
# the upsert keeps the greater version's rules with ``control_edges.newer_wins``, and a
# rederive folding it with the kept events gives the row the catalog showed (ADR 0090).
_KEEP_CONTROL_EDGES = f"""
INSERT INTO catalog_retained_control_edge AS t (upstream_key, downstream_key, first_seen,
    last_seen, version, last_run_uuid, dependency_type, sequence_trigger_rule,
    status_trigger_rule, trigger_rule)
SELECT u.key_hash, d.key_hash, c.first_seen, c.last_seen, c.version, c.last_run_uuid,
       c.dependency_type, c.sequence_trigger_rule, c.status_trigger_rule, c.trigger_rule
FROM catalog_control_edge c
JOIN catalog_job u ON u.id = c.upstream_id
JOIN catalog_job d ON d.id = c.downstream_id
WHERE c.upstream_id IN ({_RUN_JOBS}) OR c.downstream_id IN ({_RUN_JOBS})
ON CONFLICT (upstream_key, downstream_key) DO UPDATE SET
    {newer_wins("t")}
"""
# Those jobs as the catalog holds them now: a summary is replaced by the newer snapshot,
# whose facets and span include every older one's. The control partners too, so a job
# only a removed event named (a placeholder) is there to draw the edge to again.
_KEEP_JOBS = f"""
INSERT INTO catalog_retained_job AS t (key_hash, namespace, name, first_seen, last_seen,
    facets, facet_versions, parent, is_placeholder)
SELECT j.key_hash, j.namespace, j.name, j.first_seen, j.last_seen, j.facets, j.facet_versions,
       CASE WHEN p.id IS NULL THEN NULL ELSE jsonb_build_array(p.namespace, p.name) END,
       j.is_placeholder
FROM catalog_job j LEFT JOIN catalog_job p ON p.id = j.parent_id
WHERE j.id IN ({_RUN_JOBS} UNION {_CONTROL_PARTNERS})
ON CONFLICT (key_hash) DO UPDATE SET first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen), facets = EXCLUDED.facets,
    facet_versions = EXCLUDED.facet_versions, parent = EXCLUDED.parent,
    is_placeholder = t.is_placeholder AND EXCLUDED.is_placeholder
"""
# Aliases (with their dataset's facets when they are its display name) and the links
# between aliases that events made; rule links are steward input, kept by the rules.
_KEEP_ALIASES = """
INSERT INTO catalog_retained_alias AS t (key_hash, namespace, name, first_seen, last_seen,
    reason, reason_detail, reason_version, is_table_name, facets, facet_versions)
SELECT a.key_hash, a.namespace, a.name, a.first_seen, a.last_seen, a.reason, a.reason_detail,
       a.reason_version, a.is_table_name,
       CASE WHEN d.namespace = a.namespace AND d.name = a.name THEN d.facets ELSE '{}' END,
       CASE WHEN d.namespace = a.namespace AND d.name = a.name THEN d.facet_versions ELSE '{}' END
FROM catalog_dataset_alias a LEFT JOIN catalog_dataset d ON d.id = a.dataset_id
WHERE a.id = ANY(%(aliases)s) AND a.reason <> 'rule'
ON CONFLICT (key_hash) DO UPDATE SET first_seen = LEAST(t.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(t.last_seen, EXCLUDED.last_seen), reason = EXCLUDED.reason,
    reason_detail = EXCLUDED.reason_detail, reason_version = EXCLUDED.reason_version,
    is_table_name = t.is_table_name OR EXCLUDED.is_table_name,
    facets = CASE WHEN EXCLUDED.facet_versions = '{}' THEN t.facets ELSE EXCLUDED.facets END,
    facet_versions = CASE WHEN EXCLUDED.facet_versions = '{}' THEN t.facet_versions
                          ELSE EXCLUDED.facet_versions END
"""
_KEEP_LINKS = """
INSERT INTO catalog_retained_link (alias_a, alias_b, reason)
SELECT a.key_hash, b.key_hash, l.reason
FROM catalog_alias_link l
JOIN catalog_dataset_alias a ON a.id = l.alias_a_id
JOIN catalog_dataset_alias b ON b.id = l.alias_b_id
WHERE (l.alias_a_id = ANY(%(aliases)s) OR l.alias_b_id = ANY(%(aliases)s)) AND l.reason <> 'rule'
ON CONFLICT (alias_a, alias_b) DO NOTHING
"""
_LINK_PARTNERS = """
SELECT alias_a_id, alias_b_id FROM catalog_alias_link
WHERE (alias_a_id = ANY(%(aliases)s) OR alias_b_id = ANY(%(aliases)s)) AND reason <> 'rule'
"""
# Every alias of the datasets the runs named: the edge summaries name their datasets by one
# of them (``_DISPLAY_ALIAS``), so each must exist again after a rederive.
_RUN_ALIASES = """
SELECT DISTINCT other.id
FROM catalog_run_dataset rd
JOIN catalog_dataset_alias a ON a.id = rd.alias_id
JOIN catalog_dataset_alias other ON other.dataset_id = a.dataset_id
WHERE rd.run_id = ANY(%s)
UNION
SELECT alias_id FROM catalog_run_dataset WHERE run_id = ANY(%s)
"""

# A lost edge's summaries (``EdgeRuns.aggregate_retained``): per edge among %(lost)s, the
# span and counts of the removed runs of its job between aliases of its datasets.
EDGE_SUMMARY = """
SELECT e.id AS edge_id, MIN(t.first_seen) AS first_seen, MAX(t.last_seen) AS last_seen,
       SUM(t.run_count) AS run_count, SUM(t.completed_run_count) AS completed_run_count
FROM catalog_lineage_edge e
JOIN catalog_job j ON j.id = e.job_id
JOIN catalog_retained_edge t ON t.job_key = j.key_hash
JOIN catalog_dataset_alias s ON s.key_hash = t.source_key AND s.dataset_id = e.source_id
JOIN catalog_dataset_alias d ON d.key_hash = t.target_key AND d.dataset_id = e.target_id
WHERE e.id = ANY(%(lost)s)
GROUP BY e.id
"""
JOB_EDGE_SUMMARY = """
SELECT e.id AS edge_id, MIN(t.first_seen) AS first_seen, MAX(t.last_seen) AS last_seen,
       SUM(t.run_count) AS run_count, SUM(t.completed_run_count) AS completed_run_count
FROM catalog_job_edge e
JOIN catalog_job j ON j.id = e.job_id
JOIN catalog_retained_job_edge t ON t.job_key = j.key_hash AND t.direction = e.direction
JOIN catalog_dataset_alias d ON d.key_hash = t.dataset_key AND d.dataset_id = e.dataset_id
WHERE e.id = ANY(%(lost)s)
GROUP BY e.id
"""

# A full rederive's last step: every summarised edge whose job and datasets exist again.
_RESTORE_EDGES = """
INSERT INTO catalog_lineage_edge AS e (source_id, target_id, job_id, first_seen, last_seen,
    run_count, completed_run_count, lineage_type, pipeline)
SELECT s.dataset_id, d.dataset_id, j.id, MIN(t.first_seen), MAX(t.last_seen),
       SUM(t.run_count), SUM(t.completed_run_count), '', ''
FROM catalog_retained_edge t
JOIN catalog_job j ON j.key_hash = t.job_key
JOIN catalog_dataset_alias s ON s.key_hash = t.source_key AND s.dataset_id IS NOT NULL
JOIN catalog_dataset_alias d ON d.key_hash = t.target_key AND d.dataset_id IS NOT NULL
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
ON CONFLICT (source_id, target_id, job_id) DO UPDATE SET
    first_seen = LEAST(e.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen),
    run_count = e.run_count + EXCLUDED.run_count,
    completed_run_count = e.completed_run_count + EXCLUDED.completed_run_count
"""
_RESTORE_JOB_EDGES = """
INSERT INTO catalog_job_edge AS e (job_id, dataset_id, direction, first_seen, last_seen,
    run_count, completed_run_count, via)
SELECT j.id, d.dataset_id, t.direction, MIN(t.first_seen), MAX(t.last_seen),
       SUM(t.run_count), SUM(t.completed_run_count), ''
FROM catalog_retained_job_edge t
JOIN catalog_job j ON j.key_hash = t.job_key
JOIN catalog_dataset_alias d ON d.key_hash = t.dataset_key AND d.dataset_id IS NOT NULL
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3
ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET
    first_seen = LEAST(e.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen),
    run_count = e.run_count + EXCLUDED.run_count,
    completed_run_count = e.completed_run_count + EXCLUDED.completed_run_count
"""

# What the summarised jobs read and wrote (``JobDataset``), alias by alias as the runs
# named them: a job's rows are the union of its runs' (``RunDataset``) and declarations'.
_RESTORE_JOB_DATASETS = """
INSERT INTO catalog_job_dataset AS e (job_id, alias_id, direction, first_seen, last_seen,
    declared)
SELECT j.id, a.id, t.direction, t.first_seen, t.last_seen, false
FROM catalog_retained_job_dataset t
JOIN catalog_job j ON j.key_hash = t.job_key
JOIN catalog_dataset_alias a ON a.key_hash = t.alias_key
ORDER BY 1, 2, 3
ON CONFLICT (job_id, alias_id, direction) DO UPDATE SET
    first_seen = LEAST(e.first_seen, EXCLUDED.first_seen),
    last_seen = GREATEST(e.last_seen, EXCLUDED.last_seen)
"""


def keep_runs(cursor: Any, run_ids: list[int]) -> None:
    """Summarise ``run_ids`` (about to be removed): their edges' spans and counts, their
    jobs' control edges, their jobs (and those jobs' control partners), and the aliases
    they read or wrote."""
    params = {"runs": run_ids}
    cursor.execute(_KEEP_EDGES, params)
    cursor.execute(_KEEP_JOB_EDGES, params)
    cursor.execute(_KEEP_JOB_DATASETS, params)
    cursor.execute(_KEEP_COLUMN_EDGES, params)
    cursor.execute(_KEEP_CONTROL_EDGES, params)
    cursor.execute(_KEEP_JOBS, params)
    cursor.execute(_RUN_ALIASES, [run_ids, run_ids])
    keep_aliases(cursor, [alias for (alias,) in cursor.fetchall()])


def keep_aliases(cursor: Any, alias_ids: list[int]) -> None:
    """Summarise the aliases ``alias_ids`` (named by removed runs or events) and the links
    events made between them and others."""
    if not alias_ids:
        return
    # A link is kept with both its ends, so a rederive can draw it again.
    cursor.execute(_LINK_PARTNERS, {"aliases": alias_ids})
    ends = sorted({alias for pair in cursor.fetchall() for alias in pair} | set(alias_ids))
    cursor.execute(_KEEP_ALIASES, {"aliases": ends})
    cursor.execute(_KEEP_LINKS, {"aliases": alias_ids})


def _version(value: Any) -> tuple[str, str]:
    return (str(value[0]), str(value[1])) if value else ("", "")


def _json(value: Any) -> Any:
    # jsonb comes back as text on these connections (core.db_timestamps, ADR 0054).
    return orjson.loads(value) if isinstance(value, str | bytes) else value


def _facets(facets: Any, versions: Any) -> dict[str, Any]:
    facets, versions = _json(facets), _json(versions)
    return {key: (_version(versions[key]), facets[key]) for key in facets if key in versions}


def _reason(version: Any, reason: str, detail: str) -> tuple[Any, ...]:
    """An alias's stored reason as the fact that gave it (its event is gone: no id)."""
    rank, time, digest = version if len(version) == 3 else (REASON_RANK.get(reason, 0), "", "")
    return ((int(rank), str(time), str(digest)), reason, None, None, detail)


def _span(first: datetime | None, last: datetime | None) -> list[datetime]:
    return [moment for moment in (first, last) if moment is not None]


def retained_facts(rules: RuleSet) -> Facts:
    """The summarised jobs, aliases (with their datasets' facets) and links, as the facts
    of one derivation batch: a full rederive derives them before any event."""
    facts = Facts()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT namespace, name, first_seen, last_seen, facets, facet_versions, parent,"
            " is_placeholder FROM catalog_retained_job ORDER BY id"
        )
        for namespace, name, first, last, facets, versions, parent, placeholder in cursor:
            job = JobFact((namespace, name), not placeholder, _span(first, last))
            job.facets = _facets(facets, versions)
            parent, versions = _json(parent), _json(versions)
            if parent and "_parent" in versions:
                parent_key = (parent[0], parent[1])
                facts.jobs.setdefault(parent_key, JobFact(parent_key, False))
                job.parent = (_version(versions["_parent"]), parent_key)
            facts.jobs[job.key] = job
        cursor.execute(
            "SELECT key_hash, namespace, name, first_seen, last_seen, reason, reason_detail,"
            " reason_version, is_table_name, facets, facet_versions"
            " FROM catalog_retained_alias ORDER BY id"
        )
        keys: dict[bytes, tuple[str, str]] = {}
        for row in cursor:
            digest, namespace, name, first, last, reason, detail, version, table = row[:9]
            version = _json(version)
            key = (namespace, name)
            keys[bytes(digest)] = key
            facts.aliases[key] = AliasFact(
                key,
                _reason(version, reason, detail),
                first,
                last,  # type: ignore[arg-type]
            )
            if table:
                facts.table_names.add(key)
            if _json(row[10]):
                facts.dataset_facets[key] = _facets(row[9], row[10])
        _control_facts(cursor, facts)
        cursor.execute("SELECT alias_a, alias_b, reason FROM catalog_retained_link ORDER BY id")
        for alias_a, alias_b, reason in cursor:
            a, b = keys.get(bytes(alias_a)), keys.get(bytes(alias_b))
            if a is None or b is None or rules.is_detached(*a) or rules.is_detached(*b):
                continue  # a detached name (steward split) is joined to nothing, as in facts.py
            else:
                facts.links[(a, b)] = (reason, None, None)
    return facts


_RETAINED_CONTROL = """
SELECT u.namespace, u.name, d.namespace, d.name, t.first_seen, t.last_seen, t.version,
       t.last_run_uuid, t.dependency_type, t.sequence_trigger_rule, t.status_trigger_rule,
       t.trigger_rule
FROM catalog_retained_control_edge t
JOIN catalog_retained_job u ON u.key_hash = t.upstream_key
JOIN catalog_retained_job d ON d.key_hash = t.downstream_key
ORDER BY t.id
"""


def _control_facts(cursor: Any, facts: Facts) -> None:
    """The summarised control edges, as the facts a batch's events would give: stored by
    the batch's ``store_control_edges`` with the same upsert, so the events derived after
    it fold in as they would have (their jobs are summarised with them)."""
    cursor.execute(_RETAINED_CONTROL)
    for up_ns, up_name, down_ns, down_name, first, last, version, run_uuid, *rules in cursor:
        pair = ((up_ns, up_name), (down_ns, down_name))
        for key in pair:
            facts.jobs.setdefault(key, JobFact(key, False))
        kind, sequence, status, trigger = rules
        facts.control[pair] = ControlFact(
            first, last, version, run_uuid, (kind, sequence, status, trigger)
        )


def restore_edges(cursor: Any) -> None:
    """Fold every summarised edge into the rederived graph (after every event)."""
    cursor.execute(_RESTORE_EDGES)
    cursor.execute(_RESTORE_JOB_EDGES)
    cursor.execute(_RESTORE_JOB_DATASETS)
    cursor.execute(_RESTORE_COLUMN_EDGES)


def add_column_edges(cursor: Any, targets: list[int], jobs: list[int]) -> None:
    """Add the summaries of the (target dataset, job) pairs whose column edges were just
    rebuilt from their facts (``column_edges.recompute``)."""
    cursor.execute(_ADD_COLUMN_EDGES_OF, [targets, jobs])

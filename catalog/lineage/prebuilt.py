"""The common graph's nodes and edges, built by PostgreSQL as the API's JSON (ADR 0109).

After the walk has chosen what is drawn (``catalog.lineage.graph``), the nodes and edges of
most graphs (observed lineage, no declarations to draw, no column or control edges, no
child jobs, no temporary dataset) are read and written out by one statement: the job edges
with their currency (``job_edges.drawn_sql``), the datasets with their aliases, the jobs,
each as the JSON text the API's renderer would write for the dictionaries
``catalog.lineage.assembly`` builds, joined into two arrays. Python then parses no timestamp
and builds no dictionary per node or edge (issue 42: ~2,300 timestamps and ~1,200
dictionaries were most of a 500-node graph's Python), and the renderer passes the two
arrays through as they are (``core.rendering.RawJSON``).

Byte for byte the dictionaries' JSON (orjson with ``OPT_UTC_Z``, core.rendering):

- text by ``to_json``, which escapes what orjson escapes (``"``, ``\\``, control characters
  as ``\\b \\f \\n \\r \\t`` or lower-case ``\\u00xx``) and writes the rest as UTF-8; U+2028
  and U+2029 are escaped by the renderer over the whole answer, as before;
- timestamps in UTC as ``YYYY-MM-DDTHH:MM:SS``, ``.ffffff`` only when the microseconds are
  not zero, then ``Z`` (``datetime.isoformat`` of a UTC datetime, as orjson writes it);
- integers and booleans as PostgreSQL writes them, which is JSON's spelling; a uuid in
  its text form (hex and hyphens, Python's ``str(uuid)``); a NULL as ``null``;
- orders as the Python sorts them (edges by direction in code-point order, dataset, job;
  nodes by id; aliases by namespace, name and id, the first ``NODE_ALIASES``, as
  assembly reads them).

tests/api/test_graph_prebuilt.py renders graphs both ways on one store and compares bytes;
the graph snapshots (tests/api/test_graph_snapshot.py) are unchanged.
"""

import re
from collections import defaultdict
from dataclasses import dataclass

import orjson
from django.db import connection

from catalog.lineage import job_edges
from catalog.lineage.assembly import _IS_TEMPORARY, NODE_ALIASES, Drawn, EdgeKey
from catalog.lineage.request import GraphRequest
from core.prepared import read_rows
from core.sql_arrays import bigint_array
from core.sql_timestamps import date_style_is_iso, json_moment


@dataclass(frozen=True)
class Prebuilt:
    """The answer's ``nodes`` and ``edges`` as JSON array text, and what the graph needs to
    know of them: the drawn jobs whose runs had pairs cut (``Graph.run_edges_cut``)."""

    nodes: str
    edges: str
    run_edges_cut: list[str]


def applies(request: GraphRequest, child_ids: list[int]) -> bool:
    """Whether the graph's nodes and edges can be prebuilt: only what this module draws is
    asked for. Declared lineage (static edges and flags), column and control edges and a
    parent's child jobs are drawn by the Python assembly. A temporary dataset among the
    drawn is found by the statement itself (``build``)."""
    return (
        request.observed
        and not request.reads_static
        and not request.columns
        and not request.control
        and not child_ids
    )


def _text(column: str) -> str:
    """A NOT NULL text column as a JSON string (``to_json``'s escapes are orjson's), cast
    to text for ``||`` (see the note above ``_EDGE``)."""
    return f"to_json({column})::text"


# A timestamp in the templates below: {moment:column}, or {moment?:column} when NULL can be;
# written as core.sql_timestamps.json_moment spells it.
_MOMENT = re.compile(r"\{moment(\??):([a-z_.]+)\}")


# Every operand of ``||`` below is text, cast where it is not (ADR 0114): ``text || bigint``
# (or a boolean, a uuid, to_json's json) is not the text concatenation but ``textanycat``,
# a SQL-language function the planner inlines by parsing its body anew at each of the ~27
# places; cast, it is the C function, and the run is the same (an integer's ``::text`` is
# the same output function either way), a fifth less planning for this statement.
# ``concat(...)`` also plans without inlining but ran ~4% slower per object.
#
# Keys and order as assembly._edges writes them (api/views/lineage.py's GraphEdgeSerializer);
# an input goes dataset → job, an output job → dataset. Columns no row leaves NULL (the job
# edge's figures, via, current: NOT NULL, or COALESCE'd as of T) are written as they are.
_EDGE = (
    """CASE WHEN e.direction = 'input' THEN """
    """'{"id":"dataset:' || e.dataset_id::text || '->job:' || e.job_id::text """
    """|| '","kind":"input","source":"dataset:' || e.dataset_id::text """
    """|| '","target":"job:' || e.job_id::text """
    """ELSE '{"id":"job:' || e.job_id::text || '->dataset:' || e.dataset_id::text """
    """|| '","kind":"output","source":"job:' || e.job_id::text """
    """|| '","target":"dataset:' || e.dataset_id::text END """
    """|| '","first_seen":' || {moment:e.first_seen} """
    """|| ',"last_seen":' || {moment:e.last_seen} """
    """|| ',"last_run_id":' || COALESCE('"' || e.run_uuid::text || '"', 'null') """
    """|| ',"run_count":' || e.run_count::text """
    """|| ',"completed_run_count":' || e.completed_run_count::text """
    """|| ',"lineage_types":' || COALESCE(t.types, '[]') """
    f"""|| ',"via":' || {_text("e.via")} || ',"current":' || e.current::text """
    """|| ',"observed":true,"static":false}'"""
)
# Keys and order as assembly._shown_nodes writes them (GraphNodeSerializer). A dataset's
# first NODE_ALIASES + 1 aliases by (namespace, name, id) are read (``al``, beside ``d``):
# NODE_ALIASES are shown, and only past the bound are they counted (``alias_count``, after
# ``aliases``), as assembly does (ADR 0184).
_ALIASES = (
    """(SELECT array_agg('{"namespace":' || to_json(a.namespace)::text || ',"name":' """
    """|| to_json(a.name)::text || ',"reason":' || to_json(a.reason)::text || '}' """
    "ORDER BY a.namespace, a.name, a.id) "
    "FROM (SELECT namespace, name, reason, id FROM catalog_dataset_alias "
    "WHERE dataset_id = d.id ORDER BY namespace, name, id LIMIT {past_bound}) a)"
)
_DATASET = (
    """'{"id":"dataset:' || d.id::text || '","type":"dataset","dataset_id":' || d.id::text """
    f"""|| ',"namespace":' || {_text("d.namespace")} || ',"name":' || {_text("d.name")} """
    """|| ',"depth":' || x.depth::text || ',"aliases":[' """
    """|| COALESCE(array_to_string(al.shown[1:{shown}], ','), '') || ']' """
    """|| CASE WHEN cardinality(al.shown) > {shown} THEN ',"alias_count":' || (SELECT """
    """count(*) FROM catalog_dataset_alias c WHERE c.dataset_id = d.id)::text ELSE '' END """
    """|| ',"is_dropped":' || d.is_dropped::text """
    """|| ',"first_seen":' || {moment?:d.first_seen} """
    """|| ',"last_seen":' || {moment?:d.last_seen} || '}'"""
)
_JOB = (
    """'{"id":"job:' || j.id::text || '","type":"job","job_id":' || j.id::text """
    f"""|| ',"namespace":' || {_text("j.namespace")} || ',"name":' || {_text("j.name")} """
    """|| ',"depth":' || CASE WHEN j.id = %(root_job)s::bigint THEN 0 """
    """ELSE COALESCE(jd.depth, 0) END::text """
    """|| ',"aliases":[],"is_dropped":false,"first_seen":' || """
    """{moment?:j.first_seen} || ',"last_seen":' """
    """|| {moment?:j.last_seen} || '}'"""
)

# After job_edges' reference runs (``WITH reference ...``): its drawn job edges, then the
# datasets' depths from the walk, each job's depth (one more than its nearest dataset with
# a drawn edge, as assembly._job_depths), the edge-API lineage types of each half, and the
# three arrays. The datasets' temporary flag and the jobs' cut flag come with their rows.
_AFTER_REFERENCE = """,
drawn_edge(id, job_id, dataset_id, direction, first_seen, last_seen, run_count,
           completed_run_count, run_uuid, via, current) AS (
{select}
), node_depth(dataset_id, depth) AS (
    SELECT * FROM unnest(%(chosen)s::bigint[], %(depths)s::int[])
), job_depth(job_id, depth) AS (
    SELECT e.job_id, min(x.depth) + 1 FROM drawn_edge e
    JOIN node_depth x ON x.dataset_id = e.dataset_id GROUP BY e.job_id
), half_types(direction, dataset_id, job_id, types) AS (
    SELECT * FROM unnest(%(type_directions)s::text[], %(type_datasets)s::bigint[],
                         %(type_jobs)s::bigint[], %(type_lists)s::text[])
)
SELECT
  (SELECT '[' || COALESCE(string_agg({edge}, ',' ORDER BY e.direction COLLATE "C",
                                     e.dataset_id, e.job_id), '') || ']'
   FROM drawn_edge e LEFT JOIN half_types t
     ON t.direction = e.direction AND t.dataset_id = e.dataset_id AND t.job_id = e.job_id),
  ds.body, ds.temporary, jb.body, jb.cut
FROM (
  SELECT '[' || COALESCE(string_agg({dataset}, ',' ORDER BY d.id), '') || ']' AS body,
         array_agg(d.id) FILTER (WHERE {temporary}) AS temporary
  FROM node_depth x JOIN catalog_dataset d ON d.id = x.dataset_id
  CROSS JOIN LATERAL (SELECT {aliases} AS shown) al
) ds, (
  SELECT '[' || COALESCE(string_agg({job}, ',' ORDER BY j.id), '') || ']' AS body,
         array_agg(j.id ORDER BY j.id) FILTER (WHERE j.lineage_edges_cut) AS cut
  FROM catalog_job j LEFT JOIN job_depth jd ON jd.job_id = j.id
  WHERE j.id = ANY(%(drawn_jobs)s::bigint[])
) jb
"""


def _statement(iso: bool) -> str:
    sql = (
        _AFTER_REFERENCE.replace("{edge}", _EDGE)
        .replace("{dataset}", _DATASET)
        .replace("{job}", _JOB)
        .replace("{temporary}", _IS_TEMPORARY)
        .replace("{aliases}", _ALIASES)
        .replace("{shown}", str(NODE_ALIASES))
        .replace("{past_bound}", str(NODE_ALIASES + 1))
    )
    return _MOMENT.sub(lambda found: json_moment(found[2], found[1] == "?", iso), sql)


# By whether the session's DateStyle is ISO (core.sql_timestamps).
_STATEMENTS = {iso: _statement(iso) for iso in (True, False)}


def build(drawn: Drawn, halves: set[EdgeKey], root_job: int | None) -> Prebuilt | None:
    """The drawn nodes and edges as the API's JSON, in one statement; None when a drawn
    dataset is a temporary job output (the Python assembly then folds it, ADR 0089)."""
    request = drawn.request
    chosen = sorted(drawn.chosen)
    keys = halves  # each of whose datasets is drawn (graph._drawn_edges)
    # The edge-API lineage types behind each half, as assembly._edges collects them; the
    # few rows that carry one are written as JSON here, by the renderer's own encoder.
    types: dict[EdgeKey, set[str]] = defaultdict(set)
    for source_id, target_id, job_id, lineage_type in drawn.edge_rows:
        if lineage_type:
            for key in (("input", source_id, job_id), ("output", target_id, job_id)):
                if key in keys:
                    types[key].add(lineage_type)
    typed = sorted(types)
    values = {
        "chosen": bigint_array(chosen),
        "depths": bigint_array(drawn.depths[dataset_id] for dataset_id in chosen),
        "drawn_jobs": bigint_array(sorted(drawn.jobs)),
        "root_job": root_job,
        "type_directions": [key[0] for key in typed],
        "type_datasets": [key[1] for key in typed],
        "type_jobs": [key[2] for key in typed],
        "type_lists": [orjson.dumps(sorted(types[key])).decode() for key in typed],
    }
    if keys:
        reference, select, edge_values = job_edges.drawn_sql(
            keys, request.as_of, request.since, request.retirements
        )
        values.update(edge_values)
    else:  # no edge to draw: the same statement over an empty edge set
        reference = "WITH reference(job_id, run_id) AS (SELECT NULL::bigint, NULL::bigint)"
        select = (
            "SELECT NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::timestamptz,"
            " NULL::timestamptz, NULL::int, NULL::int, NULL::uuid, NULL::text, NULL::bool"
            " WHERE false"
        )
    sql = _STATEMENTS[date_style_is_iso(connection)]
    # Concatenated, not formatted: the reference runs' SQL is not a format string.
    [(edges, nodes, temporary, job_nodes, cut)] = read_rows(
        reference + sql.replace("{select}", select), values
    )
    if temporary:
        return None
    datasets_open = nodes[:-1]
    joined = job_nodes[1:]
    if datasets_open != "[" and joined != "]":
        datasets_open += ","
    return Prebuilt(
        nodes=datasets_open + joined,
        edges=edges,
        run_edges_cut=[f"job:{job_id}" for job_id in cut or ()],
    )

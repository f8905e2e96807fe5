"""Column lineage reads: the one model every surface reads (ADR 0060).

``ColumnLineageEdge`` holds two kinds of rows, derived and folded alike
(catalog/services/derivation/column_edges.py):
- *column edges*: source dataset.field → target dataset.field through a job, one per
  transformation the producer sent (type, subtype, description, masking), with the
  producer's older field-level form of the target field beside it;
- *dataset-level dependencies* (``dataset_level``, target field ""): a source field that
  filters, joins, groups, sorts or windows the whole target (columnLineage 1-2-0's
  ``dataset`` list, INDIRECT transformations).

A column edge whose target dataset has a schema (``DatasetField`` rows) that does not
name its target field is ``outside_schema``: kept and served, flagged (ADR 0069).

A job's current JobEvent declaration (static lineage, ADR 0061) states column edges and
dependencies too (``catalog_static_column_lineage``, by alias): ``among`` reads them beside
the observed ones in the same shape, marked ``static`` (no runs; seen when declared).

The native graph (``catalog.lineage.graph``, ``columns=true``), the dataset detail, the admin
picture and the Marquez mount (its dataset ``columnLineage`` and ``/column-lineage``) read
them here and only shape them, so they cannot disagree. Every read is bounded: by the
datasets asked for and a row limit, and the walk by its depth and field budget.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connection

from catalog.lineage import currency, window
from catalog.models import DatasetField
from core.prepared import read_cursor
from core.redaction import redact_text
from core.sql_arrays import bigint_array


def outside(target: str) -> str:
    """Whether a row's target field is outside its target's schema: the target has fields
    and none is named so (``target``: the SQL of the target dataset's id). One index probe
    per row (the field table's unique key leads with the dataset)."""
    return (
        f"(NOT c.dataset_level AND EXISTS (SELECT 1 FROM catalog_dataset_field f"
        f" WHERE f.dataset_id = {target}) AND NOT EXISTS (SELECT 1 FROM catalog_dataset_field f"
        f" WHERE f.dataset_id = {target} AND f.name = c.target_field))"
    )


_SELECT = """
SELECT c.id, c.source_id, s.namespace, s.name, c.source_field, c.target_id, t.namespace,
       t.name, c.target_field, c.job_id, c.transformation_type, c.transformation_subtype,
       c.transformation_description, c.masking, c.field_transformation_type,
       c.field_transformation_description, c.dataset_level, c.first_seen, c.last_seen,
       c.run_count, r.run_uuid, {outside}
FROM catalog_column_lineage_edge c
JOIN catalog_dataset s ON s.id = c.source_id
JOIN catalog_dataset t ON t.id = c.target_id
LEFT JOIN catalog_run r ON r.id = c.last_run_id
""".format(outside=outside("c.target_id"))
_ORDER = (
    " ORDER BY c.dataset_level, c.target_id, c.target_field, s.namespace, s.name,"
    " c.source_field, c.job_id, c.key_hash LIMIT %(limit)s"
)


@dataclass
class ColumnEdge:
    id: int
    source_id: int
    source_namespace: str
    source_name: str
    source_field: str
    target_id: int
    target_namespace: str
    target_name: str
    target_field: str  # "" for a dataset-level dependency
    job_id: int
    transformation_type: str
    transformation_subtype: str
    transformation_description: str
    masking: bool
    field_transformation_type: str
    field_transformation_description: str
    dataset_level: bool
    first_seen: datetime
    last_seen: datetime
    run_count: int
    last_run_id: Any
    outside_schema: bool  # the target has a schema without target_field (never a dependency)
    current: bool | None = None  # None: not asked for (the Marquez walk)
    static: bool = False  # a job's current JobEvent declares it (ADR 0061), no runs

    def native(self) -> dict[str, Any]:
        """The API's shape (api/views/lineage.py's ColumnEdgeSerializer and
        DatasetDependencySerializer, key for key)."""
        body: dict[str, Any] = {
            "source": f"dataset:{self.source_id}",
            "source_field": self.source_field,
            "target": f"dataset:{self.target_id}",
        }
        if not self.dataset_level:
            body["target_field"] = self.target_field
        body.update(
            {
                "job": f"job:{self.job_id}",
                "transformation_type": self.transformation_type,
                "transformation_subtype": self.transformation_subtype,
                "transformation_description": self.transformation_description,
                "masking": self.masking,
            }
        )
        if not self.dataset_level:
            body["field_transformation_type"] = self.field_transformation_type
            body["field_transformation_description"] = self.field_transformation_description
        body.update(
            {
                "first_seen": self.first_seen,
                "last_seen": self.last_seen,
                "run_count": self.run_count,
                "last_run_id": self.last_run_id,
                "current": bool(self.current),
                "static": self.static,
            }
        )
        if not self.dataset_level:
            body["outside_schema"] = self.outside_schema
        return body

    def named(self) -> dict[str, Any]:
        """The API's shape with the source named (the dataset detail)."""
        return {
            **self.native(),
            "source_namespace": self.source_namespace,
            "source_name": self.source_name,
        }


@dataclass
class ColumnLineage:
    edges: list[ColumnEdge] = field(default_factory=list)
    dependencies: list[ColumnEdge] = field(default_factory=list)
    # Rows past the limit that were not read (``among``; at most COUNT_CAP counted).
    left_out: int = 0

    def native(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        return [edge.native() for edge in self.edges], [d.native() for d in self.dependencies]


# Rows past a limit are counted up to this many: the count costs what it finds, so it
# stops too (an answer then says "at least").
COUNT_CAP = 100_000


def _left_out(where: str, values: dict[str, Any], static: bool) -> int:
    """How many rows ``where`` matches past ``values["limit"]`` (up to COUNT_CAP): only the
    FROM of the read, none of its columns."""
    tables = (_STATIC_SELECT if static else _SELECT).split("\nFROM ", 1)[1]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {tables} WHERE {where} LIMIT %(count_cap)s) AS q",
            {**values, "count_cap": COUNT_CAP},
        )
        return max(cursor.fetchone()[0] - values["limit"], 0)


def _read(
    where: str, values: dict[str, Any], static: bool = False, prepared: bool = False
) -> list[ColumnEdge]:
    """``prepared``: ``where`` and the values' types are one fixed text whose generic plan
    suits every value (core.prepared.read_cursor)."""
    with read_cursor() if prepared else connection.cursor() as cursor:
        cursor.execute(select_sql(static) + " WHERE " + where + order_sql(static), values)
        return edges_of(cursor.fetchall(), static)


def select_sql(static: bool) -> str:
    """The SELECT and FROM of the observed (or declared) edges, in ColumnEdge's columns."""
    return _STATIC_SELECT if static else _SELECT


def order_sql(static: bool) -> str:
    """Their ORDER BY and LIMIT (``%(limit)s``)."""
    return _STATIC_ORDER if static else _ORDER


def edges_of(rows: Any, static: bool) -> list[ColumnEdge]:
    """The edges of rows in ColumnEdge's columns, their descriptions redacted."""
    edges = [ColumnEdge(*row) for row in rows]
    # Descriptions are producer text (often SQL): every surface gets them redacted, here.
    for edge in edges:
        edge.static = static
        if edge.transformation_description:
            edge.transformation_description = redact_text(edge.transformation_description)
        if edge.field_transformation_description:
            edge.field_transformation_description = redact_text(
                edge.field_transformation_description
            )
    return edges


# A declaration's column edges, in _SELECT's columns: through the aliases' current
# datasets, seen when declared, no runs. The declaration holds until replaced, so ``since``
# does not filter it (as catalog.lineage.design_time); ``as_of`` shows one made by then.
_STATIC_SELECT = """
SELECT c.id, sa.dataset_id, s.namespace, s.name, c.source_field, ta.dataset_id, t.namespace,
       t.name, c.target_field, c.job_id, c.transformation_type, c.transformation_subtype,
       c.transformation_description, c.masking, c.field_transformation_type,
       c.field_transformation_description, c.dataset_level, l.declared_at, l.declared_at,
       0, NULL::uuid, {outside}
FROM catalog_dataset_alias ta
JOIN catalog_static_column_lineage c ON c.target_alias_id = ta.id
JOIN catalog_static_lineage l ON l.job_id = c.job_id
JOIN catalog_dataset_alias sa ON sa.id = c.source_alias_id
JOIN catalog_dataset s ON s.id = sa.dataset_id
JOIN catalog_dataset t ON t.id = ta.dataset_id
""".format(outside=outside("ta.dataset_id"))
_STATIC_ORDER = (
    " ORDER BY c.dataset_level, ta.dataset_id, c.target_field, s.namespace, s.name,"
    " c.source_field, c.job_id, c.key_hash LIMIT %(limit)s"
)


def with_currency(edges: list[ColumnEdge], as_of: datetime | None) -> ColumnLineage:
    if not edges:
        return ColumnLineage()
    current = currency.current_column_edges({e.id: e.job_id for e in edges}, as_of)
    answer = ColumnLineage()
    for edge in edges:
        edge.current = edge.id in current
        (answer.dependencies if edge.dataset_level else answer.edges).append(edge)
    return answer


def among(
    dataset_ids: list[int],
    limit: int,
    as_of: datetime | None = None,
    since: datetime | None = None,
    observed: bool = True,
    static: bool = False,
) -> ColumnLineage:
    """Column edges and dataset-level dependencies with both ends in ``dataset_ids`` (a
    graph's datasets), as of / since a time, at most ``limit`` rows, each with ``current``:
    the observed ones and/or (``static``) those the jobs' current declarations state, at
    most ``limit`` of each, and how many rows the limit left out (``left_out``, counted
    only when a kind reached it). A declared edge is never current (no run produced it)."""
    if not dataset_ids:
        return ColumnLineage()
    edges: list[ColumnEdge] = []
    left_out = 0
    if observed:
        filters, values = window.observed(as_of, since, "c")
        where = f"c.source_id = ANY(%(ids)s) AND c.target_id = ANY(%(ids)s) {filters}"
        values.update(ids=dataset_ids, limit=limit)
        edges = _read(where, values)
        if len(edges) == limit:  # there may be more: counted, only then
            left_out += _left_out(where, values, static=False)
    answer = with_currency(edges, as_of)
    if static:
        declared, values = window.declared(as_of, "l", ("ta.dataset_id", "sa.dataset_id"))
        where = "ta.dataset_id = ANY(%(ids)s) AND sa.dataset_id = ANY(%(ids)s)" + declared
        values.update(ids=dataset_ids, limit=limit)
        found = _read(where, values, static=True)
        for edge in found:
            edge.current = False
            (answer.dependencies if edge.dataset_level else answer.edges).append(edge)
        if len(found) == limit:
            left_out += _left_out(where, values, static=True)
    answer.left_out = left_out
    return answer


def into(
    dataset_ids: list[int],
    limit: int,
    currency_too: bool = True,
    observed: bool = True,
    static: bool = False,
) -> ColumnLineage:
    """Column edges and dataset-level dependencies into ``dataset_ids`` (the admin's
    dataset page, Marquez's dataset ``columnLineage``; the API's dataset detail reads the
    same in one statement with the outside-schema count, ``column_detail``, ADR 0135),
    wherever their sources are: the observed ones
    and/or (``static``) those the jobs' current declarations state into them, at most
    ``limit`` of each, declared ones after the observed ones and marked ``static``."""
    if not dataset_ids:
        return ColumnLineage()
    # One dataset (the dataset detail, the admin's, a Marquez dataset): by equality on its
    # id, a fixed text prepared on a kept connection. Planning the two reads was most of
    # their cost, the declared one's six-table join 0.6 ms (ADR 0124); each generic plan is
    # the custom one, an index equality on the target (the edge table's unique key, or the
    # alias table's dataset index), then a sort of what it found.
    one = len(dataset_ids) == 1
    where = "c.target_id = %(id)s::bigint" if one else "c.target_id = ANY(%(ids)s::bigint[])"
    # Many (a Marquez page or graph: ~3,000 at the 1M store) as one array literal, not
    # psycopg's per-element dumper (core.sql_arrays, ADR 0129).
    values = (
        {"id": dataset_ids[0], "limit": limit}
        if one
        else {"ids": bigint_array(dataset_ids), "limit": limit}
    )
    edges: list[ColumnEdge] = []
    if observed:
        # Many prepared too (ADR 0134): the literal is one text parameter, so one statement
        # per connection; planning it was ~0.7 ms of a Marquez graph's, and its generic plan
        # (a probe of the edge table's target per id, then the sort) is the custom one's.
        edges = _read(where, values, prepared=True)
    answer = with_currency(edges, None) if currency_too else sorted_by_level(edges)
    if static:
        where = (
            "ta.dataset_id = %(id)s::bigint" if one else "ta.dataset_id = ANY(%(ids)s::bigint[])"
        )
        declared = _read(where, values, static=True, prepared=one)
        for edge in declared:
            edge.current = False  # no run produced it (as in ``among``)
            (answer.dependencies if edge.dataset_level else answer.edges).append(edge)
    return answer


def observed_into_read(dataset_ids: list[int], limit: int) -> tuple[str, dict[str, Any]]:
    """The statement and values of ``into``'s observed read of ``dataset_ids`` (not empty;
    its rows are ``edges_of(rows, static=False)``): for a caller that sends it with others
    in one round trip (the Marquez graph's nodes, ``core.pipelined_reads``, ADR 0140)."""
    values: dict[str, Any]
    if len(dataset_ids) == 1:
        where, values = "c.target_id = %(id)s::bigint", {"id": dataset_ids[0], "limit": limit}
    else:
        where = "c.target_id = ANY(%(ids)s::bigint[])"
        values = {"ids": bigint_array(dataset_ids), "limit": limit}
    return select_sql(False) + " WHERE " + where + order_sql(False), values


def sorted_by_level(edges: list[ColumnEdge]) -> ColumnLineage:
    """``into``'s answer of these observed edges without their currency
    (``currency_too=False``): column edges and dataset-level dependencies apart."""
    answer = ColumnLineage()
    for edge in edges:
        (answer.dependencies if edge.dataset_level else answer.edges).append(edge)
    return answer


# --- the field walk (Marquez's /column-lineage) --------------------------------------

Field = tuple[int, str]  # (dataset id, field name)


@dataclass
class FieldWalk:
    fields: set[Field]
    edges: list[ColumnEdge]
    truncated: bool


def _step_where(frontier: set[Field], upstream: bool, limit: int) -> tuple[str, dict[str, Any]]:
    """The WHERE of the column edges into (``upstream``) or out of ``frontier``'s fields,
    and its values."""
    ordered = sorted(frontier)
    side = "target" if upstream else "source"
    return (
        # The ANY on the dataset column lets the walk use its index (the unique key leads
        # with target_id, catalog_coledge_source_idx with source_id).
        f"c.dataset_level = false AND c.{side}_id = ANY(%(ids)s) AND "
        f"(c.{side}_id, c.{side}_field) IN "
        "(SELECT * FROM unnest(%(ids)s::bigint[], %(fields)s::text[]))",
        {
            "ids": [item[0] for item in ordered],
            "fields": [item[1] for item in ordered],
            "limit": limit,
        },
    )


def step(frontier: set[Field], upstream: bool, limit: int) -> list[ColumnEdge]:
    return _read(*_step_where(frontier, upstream, limit))


@dataclass
class Reader:
    """A column edge out of a field as a breaking change names it (catalog.lineage.breaking)."""

    id: int
    source_id: int
    source_field: str
    target_id: int
    target_namespace: str
    target_name: str
    target_field: str
    job_id: int


# ``step``'s rows downstream, in its order, with only the columns a Reader has: the run,
# the schema test and the transformations were half of /changes' backend CPU a page of 500
# (docs/benchmarks.md, "/changes' breaks: ..."), and a change names none of them. The
# source stays joined: the order (so which rows a limit cuts) reads its name.
_READERS = """
SELECT c.id, c.source_id, c.source_field, c.target_id, t.namespace, t.name, c.target_field,
       c.job_id
FROM catalog_column_lineage_edge c
JOIN catalog_dataset s ON s.id = c.source_id
JOIN catalog_dataset t ON t.id = c.target_id
"""


def readers(frontier: set[Field], limit: int) -> list[Reader]:
    """The column edges out of ``frontier``'s fields that ``step(frontier, upstream=False,
    limit)`` reads, in its order, as Readers."""
    where, values = _step_where(frontier, False, limit)
    with connection.cursor() as cursor:
        cursor.execute(_READERS + " WHERE " + where + _ORDER, values)
        return [Reader(*row) for row in cursor.fetchall()]


def walk(start: set[Field], depth: int, downstream: bool, max_fields: int) -> FieldWalk:
    """Column edges reached from ``start`` upstream (and downstream too when asked), level
    by level: one query per level and direction, at most ``depth`` levels and
    ``max_fields`` fields; ``truncated`` when a bound cut it."""
    edges: dict[int, ColumnEdge] = {}
    seen: set[Field] = set(start)
    truncated = False
    for upstream in (True, False) if downstream else (True,):
        frontier = set(start)
        for _level in range(depth):
            if not frontier:
                break
            rows = step(frontier, upstream, max_fields * 4)
            frontier = set()
            for edge in rows:
                edges[edge.id] = edge
                other = (
                    (edge.source_id, edge.source_field)
                    if upstream
                    else (edge.target_id, edge.target_field)
                )
                if other not in seen:
                    if len(seen) >= max_fields:
                        truncated = True
                        continue
                    seen.add(other)
                    frontier.add(other)
        truncated = truncated or bool(frontier)
    ordered = sorted(edges.values(), key=lambda e: (e.target_id, e.target_field, e.id))
    return FieldWalk(seen, ordered, truncated)


def job_fields(job_id: int, limit: int) -> set[Field]:
    """The fields a job's column edges wrote."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT c.target_id, c.target_field FROM catalog_column_lineage_edge c"
            " WHERE c.job_id = %(job)s AND c.dataset_level = false AND c.target_id IN ("
            " SELECT je.dataset_id FROM catalog_job_edge je WHERE je.job_id = %(job)s"
            " AND je.direction = 'output') ORDER BY 1, 2 LIMIT %(limit)s",
            {"job": job_id, "limit": limit},
        )
        return {(row[0], row[1]) for row in cursor.fetchall()}


def dataset_fields(dataset_id: int, limit: int) -> set[Field]:
    """A dataset's schema fields and every field its column lineage names (a dataset may
    have lineage facets without a schema facet)."""
    names = DatasetField.objects.filter(dataset_id=dataset_id).order_by("ordinal")[:limit]
    start = {(dataset_id, name) for name in names.values_list("name", flat=True)}
    with connection.cursor() as cursor:
        cursor.execute(
            "(SELECT target_field FROM catalog_column_lineage_edge WHERE target_id = %(id)s"
            " AND dataset_level = false LIMIT %(limit)s) UNION (SELECT source_field FROM"
            " catalog_column_lineage_edge WHERE source_id = %(id)s LIMIT %(limit)s)",
            {"id": dataset_id, "limit": limit},
        )
        start |= {(dataset_id, row[0]) for row in cursor.fetchall()}
    return set(sorted(start)[:limit])


def outside_schema_count(dataset_id: int) -> int:
    """How many column edges into ``dataset_id`` target a field outside its schema (0 when
    it has none), over every edge, not the capped list (the API's detail counts it in
    ``column_detail``'s statement, ADR 0135). A fixed
    text, prepared on a kept connection (ADR 0124)."""
    with read_cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM catalog_column_lineage_edge c WHERE c.target_id = %(id)s::bigint"
            f" AND {outside('c.target_id')}",
            {"id": dataset_id},
        )
        return int(cursor.fetchone()[0])

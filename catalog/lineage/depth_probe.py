"""The depth bound's probe of the lineage graph (``catalog.lineage.graph``): of the drawn
datasets at the depth bound, those with lineage beyond it (``cut.depth``), in one statement
for both directions. Apart from graph.py, which is at the module size limit."""

from catalog.lineage import design_time, job_edges, window
from catalog.lineage.request import CUT_LIST_LIMIT, GraphRequest
from core.prepared import read_rows
from core.sql_arrays import bigint_array


def has_more(
    dataset_ids: list[int], upstream: bool, request: GraphRequest, jobs: set[int]
) -> list[int]:
    """Of ``dataset_ids`` (at the depth bound), those with lineage beyond it: an edge to
    another dataset, or a job that reads (downstream) / writes (upstream) it and is not
    drawn."""
    return has_more_sides({upstream: dataset_ids}, request, jobs)[upstream]


def has_more_sides(
    sides: dict[bool, list[int]], request: GraphRequest, jobs: set[int]
) -> dict[bool, list[int]]:
    """``has_more`` for each direction's datasets at the bound (upstream True/False), in one
    statement: one ``SELECT`` per direction, each with its own LIMIT."""
    found: dict[bool, list[int]] = {upstream: [] for upstream in sides}
    filters, values = window.observed(request.as_of, request.since, "e", request.retirements)
    job_filters, _ = job_edges.filters(request.as_of, request.since, request.retirements)
    selects = []
    for upstream, dataset_ids in sides.items():
        if not dataset_ids:
            continue
        name = "up" if upstream else "down"
        column = "target_id" if upstream else "source_id"
        conditions = []
        if request.observed:
            conditions += [
                f"EXISTS (SELECT 1 FROM catalog_lineage_edge e WHERE e.{column} = d {filters})",
                "EXISTS (SELECT 1 FROM catalog_job_edge je WHERE je.dataset_id = d "
                f"AND je.direction = %({name}_direction)s "
                f"AND NOT (je.job_id = ANY({_DRAWN_JOBS})) {job_filters})",
            ]
        if request.reads_static:
            static_condition, static_values = design_time.has_more_sql(upstream, request.as_of)
            conditions.append(static_condition)
            values.update(static_values)
        probes = " OR ".join(_probe(condition) for condition in conditions)
        selects.append(
            f"(SELECT {'true' if upstream else 'false'}, d "
            f"FROM unnest(%({name}_ids)s::bigint[]) AS d WHERE {probes} "
            "ORDER BY d LIMIT %(limit)s)"
        )
        values[f"{name}_ids"] = bigint_array(dataset_ids)
        values[f"{name}_direction"] = "output" if upstream else "input"
    if not selects:
        return found
    values.update({"jobs": bigint_array(sorted(jobs)), "limit": CUT_LIST_LIMIT})
    for upstream, dataset_id in read_rows(" UNION ALL ".join(selects), values):
        found[upstream].append(dataset_id)
    return found


# The drawn jobs as a value the planner does not look into (an InitPlan, computed once):
# given the array itself, it estimated ``<> ALL`` element by element against the job
# column's most common values, ~340 jobs x 2 directions, two thirds of this statement's CPU
# (0.9 ms of planning, ADR 0114). The probe is an index probe by dataset either way, the
# jobs a filter on the few rows it finds: the same rows.
_DRAWN_JOBS = "(SELECT %(jobs)s::bigint[])::bigint[]"


def _probe(exists: str) -> str:
    """``EXISTS (SELECT 1 ...)`` as a scalar probe, ``(SELECT 1 ... LIMIT 1) IS NOT NULL``:
    the same truth, but never a hashed subplan. Joined by OR, PostgreSQL turned the EXISTS
    into one that read the whole edge table on every graph (all 300,000 edges of
    bench/read.py's store to answer for a few dozen datasets; issue 42); a scalar subquery
    is an index probe per dataset at the depth bound."""
    if not (exists.startswith("EXISTS (SELECT 1 ") and exists.endswith(")")):
        raise ValueError(f"not an EXISTS condition: {exists[:40]}")
    return f"{exists[len('EXISTS ') : -1]} LIMIT 1) IS NOT NULL"

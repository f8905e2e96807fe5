"""The per-namespace summary (ADR 0121): for each namespace, how many of its datasets and of
its jobs are current (not retired, ADR 0078) and when the first of them was first seen and
the last of them last seen. The two namespace reads (``GET /api/v1/namespaces`` and the
Marquez mount's) read it instead of aggregating the job and dataset tables, so they cost
what the number of namespaces costs.

It is kept by PostgreSQL: statement-level triggers on ``catalog_dataset``, ``catalog_job``
and ``catalog_retirement`` fold each statement's rows (its transition tables) into the
summary, so every path that writes those tables keeps it right by construction
(derivation, merges, display names, retire and restore, revival, purge, rederive, the
admin, a raw ``DELETE``) and derivation sends no statement more. How (ADR 0121):

- a row inserted, or updated with its span only grown, adds to its namespace's count
  (``+1 - 1`` for an update) and widens its span (LEAST/GREATEST): idempotent and
  order-free, and the summary row is written only when something changes;
- a row deleted, moved to another namespace, retired or restored, or whose span shrank,
  may have been the namespace's first or last: the namespace is recounted from its rows
  (one indexed GROUP BY of that namespace) when the span it leaves held an end of the
  summary's, and always on a retirement or restore (rare, steward paths);
- each statement locks the summary rows it changes in one order (the namespace's bytes),
  and a recount reads the rows after taking that lock, so a concurrent statement's change
  is either in its count or applied after it.

The functions' SQL is built here from ``retired_sql`` (the one spelling of "retired"). The
migration that installs them holds a copy of what this module built then;
tests/catalog/test_namespace_summary.py fails when the two differ, so a change here comes
with a migration that installs it. ``catalog_namespace_refresh()`` rebuilds the summary
from the tables (catalog.services.namespaces, ``manage.py refresh_namespaces``; the
migration fills it so).
"""

from typing import Any

from django.db import models
from django.db.models.functions import MD5

from catalog.models.retirement import RetiredKind, retired_sql
from ingest.models import DigestIndexedText

# The kinds of row the summary counts, and their tables.
TABLES = {RetiredKind.DATASET: "catalog_dataset", RetiredKind.JOB: "catalog_job"}


class NamespaceQuerySet(models.QuerySet["Namespace"]):
    def counts(self) -> dict[str, dict[int, int]]:
        """Namespace → kind → how many current rows (one statement over the summary)."""
        counts: dict[str, dict[int, int]] = {}
        for namespace, kind, members in self.order_by().values_list("namespace", "kind", "members"):
            counts.setdefault(namespace, {})[kind] = members
        return counts

    def spans(self, namespace: str | None = None) -> list[tuple[str, Any, Any]]:
        """(namespace, first seen, last seen) of every namespace (or the one named), by
        name: one statement over the summary."""
        rows = self.order_by()
        if namespace is not None:
            rows = rows.filter(namespace=namespace)
        spans = rows.values("namespace").annotate(
            first=models.Min("created"), last=models.Max("updated")
        )
        return sorted((row["namespace"], row["first"], row["last"]) for row in spans)


class Namespace(models.Model):
    """One namespace's current datasets (``kind`` 1) or jobs (2): derived, by triggers."""

    kind = models.SmallIntegerField(choices=[(int(kind), kind.label) for kind in TABLES])
    namespace = DigestIndexedText()
    members = models.BigIntegerField()
    created = models.DateTimeField(null=True)  # min first_seen of the current rows
    updated = models.DateTimeField(null=True)  # max last_seen

    objects = NamespaceQuerySet.as_manager()

    class Meta:
        db_table = "catalog_namespace"
        constraints = [
            # The triggers upsert ON CONFLICT (kind, md5(namespace)): unbounded text.
            models.UniqueConstraint("kind", MD5("namespace"), name="catalog_namespace_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace} ({RetiredKind(self.kind).label}s: {self.members})"


# The same digest-then-text test every namespace lookup of the house makes.
def _same(column: str, value: str) -> str:
    return f"md5({column}) = md5({value}) AND {column} = {value}"


def _functions() -> dict[str, tuple[str, str]]:
    """Function name → (its arguments, its PL/pgSQL body); a function without arguments
    but ``catalog_namespace_refresh`` is a trigger's."""
    functions: dict[str, tuple[str, str]] = {}
    for kind, table in TABLES.items():
        k, label = int(kind), kind.label
        functions[f"catalog_namespace_recount_{label}"] = (
            "ns text[]",
            f"""
BEGIN
    IF cardinality(ns) IS NULL THEN
        RETURN;  -- (a retirement statement that changed no row: a batch's revival)
    END IF;
    -- Lock (or make) each namespace's row, in the one order, before reading the rows: a
    -- statement that changed them has then either committed (and is counted) or waits.
    INSERT INTO catalog_namespace AS s (kind, namespace, members)
    SELECT {k}, x, 0 FROM unnest(ns) AS x GROUP BY x ORDER BY convert_to(x, 'UTF8')
    ON CONFLICT (kind, md5(namespace)) DO UPDATE SET members = s.members WHERE false;
    UPDATE catalog_namespace s SET members = c.n, created = c.lo, updated = c.hi
    FROM unnest(ns) AS x CROSS JOIN LATERAL (
        SELECT count(*) AS n, min(t.first_seen) AS lo, max(t.last_seen) AS hi
        FROM {table} t WHERE {_same("t.namespace", "x")} AND NOT {retired_sql(kind, "t.id")}
    ) c
    WHERE s.kind = {k} AND {_same("s.namespace", "x")};
    DELETE FROM catalog_namespace s
    WHERE s.kind = {k} AND md5(s.namespace) = ANY(SELECT md5(x) FROM unnest(ns) AS x)
      AND s.namespace = ANY(ns) AND s.members <= 0;
END""",
        )
        functions[f"catalog_namespace_apply_{label}"] = (
            "ns text[], d bigint[], lo timestamptz[], hi timestamptz[], "
            "gone_lo timestamptz[], gone_hi timestamptz[]",
            f"""
DECLARE
    lost text[];
BEGIN
    IF cardinality(ns) IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO catalog_namespace AS s (kind, namespace, members, created, updated)
    SELECT {k}, c.x, c.d, c.lo, c.hi FROM unnest(ns, d, lo, hi) AS c(x, d, lo, hi)
    ORDER BY convert_to(c.x, 'UTF8')
    ON CONFLICT (kind, md5(namespace)) DO UPDATE
    SET members = s.members + excluded.members,
        created = LEAST(s.created, excluded.created),
        updated = GREATEST(s.updated, excluded.updated)
    WHERE excluded.members <> 0
       OR s.created IS DISTINCT FROM LEAST(s.created, excluded.created)
       OR s.updated IS DISTINCT FROM GREATEST(s.updated, excluded.updated);
    -- A span left by a row that held one of its namespace's ends: recount that namespace.
    SELECT array_agg(g.x) INTO lost
    FROM unnest(ns, gone_lo, gone_hi) AS g(x, lo, hi)
    JOIN catalog_namespace s ON s.kind = {k} AND {_same("s.namespace", "g.x")}
    WHERE g.lo <= s.created OR g.hi >= s.updated;
    IF lost IS NOT NULL THEN
        PERFORM catalog_namespace_recount_{label}(lost);
    END IF;
    DELETE FROM catalog_namespace s
    WHERE s.kind = {k} AND md5(s.namespace) = ANY(SELECT md5(x) FROM unnest(ns) AS x)
      AND s.namespace = ANY(ns) AND s.members <= 0;
END""",
        )
        # What one statement on the table changed, per namespace: the count's delta, the
        # span it adds, and the span it took away (an old row's, when that could shrink).
        current = f"NOT {retired_sql(kind, 'coalesce(n.id, o.id)')}"
        shrank = (
            "n.id IS NULL OR n.namespace IS DISTINCT FROM o.namespace"
            " OR n.first_seen IS DISTINCT FROM LEAST(o.first_seen, n.first_seen)"
            " OR n.last_seen IS DISTINCT FROM GREATEST(o.last_seen, n.last_seen)"
        )
        functions[f"catalog_namespace_{label}_changed"] = (
            "",
            f"""
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM catalog_namespace WHERE kind = {k};
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM catalog_namespace_apply_{label}(
            array_agg(x), array_agg(d), array_agg(lo), array_agg(hi), NULL, NULL)
        FROM (
            SELECT n.namespace AS x, count(*) AS d, min(n.first_seen) AS lo,
                   max(n.last_seen) AS hi
            FROM new_rows n WHERE NOT {retired_sql(kind, "n.id")} GROUP BY n.namespace
        ) g;
    ELSE
        PERFORM catalog_namespace_apply_{label}(
            array_agg(x), array_agg(d), NULL, NULL, array_agg(lo), array_agg(hi))
        FROM (
            SELECT o.namespace AS x, -count(*) AS d, min(o.first_seen) AS lo,
                   max(o.last_seen) AS hi
            FROM old_rows o WHERE NOT {retired_sql(kind, "o.id")} GROUP BY o.namespace
        ) g;
    END IF;
    RETURN NULL;
END""",
        )
        functions[f"catalog_namespace_{label}_updated"] = (
            "",
            f"""
BEGIN
    PERFORM catalog_namespace_apply_{label}(
        array_agg(x), array_agg(d), array_agg(lo), array_agg(hi), array_agg(gone_lo),
        array_agg(gone_hi))
    FROM (
        SELECT c.x, sum(c.d)::bigint AS d, min(c.lo) AS lo, max(c.hi) AS hi,
               min(c.gone_lo) AS gone_lo, max(c.gone_hi) AS gone_hi
        FROM old_rows o FULL JOIN new_rows n ON n.id = o.id
        CROSS JOIN LATERAL (VALUES
            (n.namespace, 1, n.first_seen, n.last_seen, NULL::timestamptz, NULL::timestamptz),
            (o.namespace, -1, NULL, NULL,
             CASE WHEN {shrank} THEN o.first_seen END,
             CASE WHEN {shrank} THEN o.last_seen END)
        ) AS c(x, d, lo, hi, gone_lo, gone_hi)
        WHERE c.x IS NOT NULL AND {current}
        GROUP BY c.x
    ) g;
    RETURN NULL;
END""",
        )

    # A retirement or restore changes which rows are current: recount the namespaces of the
    # objects its rows name (rare: a steward's act, a revival), whatever the rows say.
    def recount_objects(rows: str) -> str:
        return "\n".join(
            f"        PERFORM catalog_namespace_recount_{kind.label}("
            "array_agg(DISTINCT t.namespace))\n"
            f"        FROM {table} t\n"
            f"        WHERE t.id IN (SELECT r.object_id FROM {rows} r WHERE r.kind = {int(kind)});"
            for kind, table in TABLES.items()
        )

    functions["catalog_namespace_retirement_changed"] = (
        "",
        f"""
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM catalog_namespace_refresh();
    ELSIF TG_OP = 'INSERT' THEN
{recount_objects("new_rows")}
    ELSIF TG_OP = 'DELETE' THEN
{recount_objects("old_rows")}
    ELSE
{recount_objects("(SELECT * FROM old_rows UNION ALL SELECT * FROM new_rows)")}
    END IF;
    RETURN NULL;
END""",
    )
    fills = "\n  UNION ALL\n".join(
        f"""    SELECT {int(kind)}, t.namespace, count(*), min(t.first_seen), max(t.last_seen)
    FROM {table} t WHERE NOT {retired_sql(kind, "t.id")} GROUP BY t.namespace"""
        for kind, table in TABLES.items()
    )
    functions["catalog_namespace_refresh"] = (
        "",
        f"""
BEGIN
    -- No statement changes the summary meanwhile; one that holds a row of it is waited for.
    LOCK TABLE catalog_namespace IN SHARE ROW EXCLUSIVE MODE;
    DELETE FROM catalog_namespace;
    INSERT INTO catalog_namespace (kind, namespace, members, created, updated)
{fills};
END""",
    )
    return functions


FUNCTIONS = _functions()


def _triggers() -> list[str]:
    statements = []
    for kind, table in TABLES.items():
        label = kind.label
        statements += [
            f"CREATE TRIGGER catalog_namespace_insert AFTER INSERT ON {table} "
            "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT "
            f"EXECUTE FUNCTION catalog_namespace_{label}_changed()",
            f"CREATE TRIGGER catalog_namespace_delete AFTER DELETE ON {table} "
            "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT "
            f"EXECUTE FUNCTION catalog_namespace_{label}_changed()",
            f"CREATE TRIGGER catalog_namespace_truncate AFTER TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION catalog_namespace_{label}_changed()",
            f"CREATE TRIGGER catalog_namespace_update AFTER UPDATE ON {table} "
            "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT "
            f"EXECUTE FUNCTION catalog_namespace_{label}_updated()",
        ]
    for event, tables in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
    ):
        statements.append(
            f"CREATE TRIGGER catalog_namespace_{event.lower()} AFTER {event} ON catalog_retirement "
            f"REFERENCING {tables} FOR EACH STATEMENT "
            "EXECUTE FUNCTION catalog_namespace_retirement_changed()"
        )
    statements.append(
        "CREATE TRIGGER catalog_namespace_truncate AFTER TRUNCATE ON catalog_retirement "
        "FOR EACH STATEMENT EXECUTE FUNCTION catalog_namespace_retirement_changed()"
    )
    return statements


def _returns(name: str, arguments: str) -> str:
    return "void" if arguments or name == "catalog_namespace_refresh" else "trigger"


def install_sql() -> list[str]:
    """The statements that install the functions and triggers (the migration's copy)."""
    functions = [
        f"CREATE OR REPLACE FUNCTION {name}({arguments}) RETURNS {_returns(name, arguments)} "
        f"LANGUAGE plpgsql AS $fn${body}$fn$"
        for name, (arguments, body) in FUNCTIONS.items()
    ]
    return functions + _triggers()


def uninstall_sql() -> list[str]:
    """The statements that remove them (the migration's reverse)."""
    triggers = [
        f"DROP TRIGGER IF EXISTS catalog_namespace_{event} ON {table}"
        for table in (*TABLES.values(), "catalog_retirement")
        for event in ("insert", "update", "delete", "truncate")
    ]
    return triggers + [f"DROP FUNCTION IF EXISTS {name}" for name in reversed(FUNCTIONS)]

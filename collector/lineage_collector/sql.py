"""What a SQL statement reads and writes, by sqlglot, with the guards a hot path needs.

Runs on the collector's worker thread only. Guards: statements that cannot carry lineage
(BEGIN, SET, SHOW, ...) are skipped before parsing; DB-API placeholders are normalised to
``?``; comments are stripped; ``UNLOAD``/``COPY`` are peeled to their query and S3 location;
oversized statements are skipped; results are cached by statement; and the parser has a
time budget per second so a flood of unique statements cannot take the host's CPU
(over budget, the worker pauses rather than dropping lineage, long enough that parsing
averages at most the budget: one statement cannot be stopped midway, but a 2 s parse is
followed by a pause of 2 s / budget).
"""

import re
import time
from collections import OrderedDict
from typing import Any, NamedTuple


class Table(NamedTuple):
    """A table as written in SQL: catalog and schema are ``None`` when not written."""

    catalog: str | None
    schema: str | None
    name: str

    def __str__(self) -> str:
        return ".".join(part for part in self if part)


class SqlLineage(NamedTuple):
    """What one statement (or script) reads and writes."""

    inputs: tuple[Table, ...] = ()
    outputs: tuple[Table, ...] = ()
    input_locations: tuple[str, ...] = ()  # S3 URIs read (COPY ... FROM 's3://...')
    output_locations: tuple[str, ...] = ()  # S3 URIs written (UNLOAD ... TO 's3://...')

    def __bool__(self) -> bool:
        return bool(self.inputs or self.outputs or self.input_locations or self.output_locations)


EMPTY = SqlLineage()

_NO_LINEAGE = re.compile(
    r"^\s*(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET|SHOW|RESET|USE|START|END|PRAGMA|"
    r"EXPLAIN|ANALYZE|VACUUM|GRANT|REVOKE|DESCRIBE|DESC|LISTEN|NOTIFY|UNLISTEN|DISCARD|"
    r"DEALLOCATE|PREPARE|LOCK|CHECKPOINT|DROP|ALTER|TRUNCATE|COMMENT|CALL|DO|CLOSE|FETCH|"
    r"DECLARE|MSCK|REFRESH|OPTIMIZE|KILL)\b",
    re.IGNORECASE,
)
# Literals are matched first so that "--" or "%s" inside a string is left alone. An
# unterminated comment runs to the end: otherwise every "/*" after it rescans the rest of the
# statement, quadratic in its length (a 90,000-character statement took 20 s).
_LEXEMES = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?(?:\*/|\Z)|%\([A-Za-z_]\w*\)s|%s|%%"
    r"|(?<![:\w]):[A-Za-z_]\w*",
    re.DOTALL,
)
# No "\s*" around the query: with ".*" between them a run of spaces can be split every way,
# cubic in its length (3,000 spaces took minutes); the query is stripped afterwards instead.
_UNLOAD = re.compile(
    r"^\s*UNLOAD\s*\((?P<query>.*)\)\s*TO\s*'(?P<location>[^']+)'", re.IGNORECASE | re.DOTALL
)
_COPY_FROM = re.compile(
    r"^\s*COPY\s+(?P<table>[\w.\"`\[\]]+)\s*(?:\([^)]*\)\s*)?FROM\s+(?:'(?P<location>[^']*)')?",
    re.IGNORECASE,
)
_COPY_TO = re.compile(
    r"^\s*COPY\s+(?:(?P<table>[\w.\"`\[\]]+)|\((?P<query>.*)\))\s*(?:\([^)]*\)\s*)?TO\b",
    re.IGNORECASE | re.DOTALL,
)
_SYSTEM_SCHEMAS = {
    "information_schema",
    "pg_catalog",
    "pg_toast",
    "sys",
    "performance_schema",
    "mysql",
}
_SYSTEM_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_sequence", "dual"}
_LOWER_DIALECTS = {"postgres", "redshift", "athena", "trino", "presto", "duckdb", "sqlite"}
_UPPER_DIALECTS = {"snowflake", "oracle"}


def normalise(sql: str) -> str:
    """Strip comments and turn DB-API placeholders (``%s``, ``%(x)s``, ``:x``) into ``?``."""

    def replace(match: re.Match[str]) -> str:
        text = match.group(0)
        first = text[0]
        if first in "'\"":
            return text
        if text.startswith(("--", "/*")):
            return " "
        if text == "%%":
            return "%"
        return "?"

    return _LEXEMES.sub(replace, sql).strip().rstrip(";").strip()


def parse_sql(
    sql: str, dialect: str | None = None, default_schema: str | None = None
) -> SqlLineage:
    """The tables (and S3 locations) ``sql`` reads and writes, as the collector reports them.

    CTE names and subquery aliases are never reported; unquoted identifiers are folded the way
    ``dialect`` folds them (lower case for PostgreSQL, upper case for Snowflake). Raises
    ``ValueError`` when sqlglot cannot parse the statement.
    """
    text = normalise(sql)
    if not text or _NO_LINEAGE.match(text):
        return EMPTY
    lineage = _peel(text, dialect)
    if lineage is None:
        lineage = _extract(text, dialect)
    if default_schema:
        lineage = lineage._replace(
            inputs=tuple(_with_schema(table, default_schema) for table in lineage.inputs),
            outputs=tuple(_with_schema(table, default_schema) for table in lineage.outputs),
        )
    return lineage


def _with_schema(table: Table, schema: str) -> Table:
    return table if table.schema else table._replace(schema=schema)


def _peel(text: str, dialect: str | None) -> SqlLineage | None:
    """UNLOAD and COPY are not SQL sqlglot knows everywhere; take them apart by hand."""
    unload = _UNLOAD.match(text)
    if unload:
        query = unload.group("query").strip()
        if query.startswith("'") and query.endswith("'"):  # Redshift: UNLOAD ('select ...')
            query = query[1:-1].replace("''", "'")
        inner = _extract(query, dialect)
        return SqlLineage(inputs=inner.inputs, output_locations=(unload.group("location"),))
    copy_from = _COPY_FROM.match(text)
    if copy_from:
        table = _table_from_text(copy_from.group("table"), dialect)
        location = copy_from.group("location") or ""
        locations = (location,) if location.startswith("s3://") else ()
        return SqlLineage(outputs=(table,), input_locations=locations)
    copy_to = _COPY_TO.match(text)
    if copy_to:
        if copy_to.group("query"):
            return SqlLineage(inputs=_extract(copy_to.group("query"), dialect).inputs)
        return SqlLineage(inputs=(_table_from_text(copy_to.group("table"), dialect),))
    return None


def _table_from_text(text: str, dialect: str | None) -> Table:
    # sqlglot comes with the hooks' optional extras (collector/pyproject.toml): the
    # collector's core imports without it.
    from sqlglot import exp

    table = exp.to_table(text, dialect=dialect)
    return _table(table, dialect)


def _extract(text: str, dialect: str | None) -> SqlLineage:
    # sqlglot comes with the hooks' optional extras (collector/pyproject.toml): the
    # collector's core imports without it.
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel

    inputs: dict[Table, None] = {}
    outputs: dict[Table, None] = {}
    for statement in sqlglot.parse(text, dialect=dialect, error_level=ErrorLevel.RAISE):
        if statement is None or isinstance(statement, exp.Command):
            continue
        targets = _targets(statement, exp)
        target_ids = {id(node) for node in targets}
        cte_names = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        for node in targets:
            table = _table(node, dialect)
            if not _is_system(table):
                outputs[table] = None
        for node in statement.find_all(exp.Table):
            if id(node) in target_ids or not isinstance(node.this, exp.Identifier):
                continue
            if not node.db and not node.catalog and node.name.lower() in cte_names:
                continue
            table = _table(node, dialect)
            if not _is_system(table) and table not in outputs:
                inputs[table] = None
    return SqlLineage(inputs=tuple(inputs), outputs=tuple(outputs))


def _targets(statement: Any, exp: Any) -> list[Any]:
    """The table nodes a statement writes to."""
    if isinstance(statement, exp.Insert | exp.Update | exp.Delete | exp.Merge | exp.Create):
        target = statement.this
        if isinstance(target, exp.Schema):  # INSERT INTO t (a, b) / CREATE TABLE t (a int)
            target = target.this
        if isinstance(statement, exp.Create) and statement.kind not in {"TABLE", "VIEW"}:
            return []
        return [target] if isinstance(target, exp.Table) else []
    if isinstance(statement, exp.Select):
        into = statement.args.get("into")
        if into is not None and isinstance(into.this, exp.Table):
            return [into.this]
    return []


def _table(node: Any, dialect: str | None) -> Table:
    parts = []
    for key in ("catalog", "db", "this"):
        identifier = node.args.get(key)
        if identifier is None or not getattr(identifier, "name", ""):
            parts.append(None)
            continue
        name = identifier.name
        if not getattr(identifier, "quoted", False):
            if dialect in _LOWER_DIALECTS:
                name = name.lower()
            elif dialect in _UPPER_DIALECTS:
                name = name.upper()
        parts.append(name)
    return Table(parts[0], parts[1], parts[2] or "")


def _is_system(table: Table) -> bool:
    return (table.schema or "").lower() in _SYSTEM_SCHEMAS or table.name.lower() in _SYSTEM_TABLES


def _load_dialect(dialect: str | None) -> None:
    if dialect:
        from sqlglot.dialects.dialect import Dialect  # an optional extra: see _extract

        Dialect.get_or_raise(dialect)


class SqlParser:
    """:func:`parse_sql` with a per-statement LRU cache, a size cap and a time budget.

    Only the worker thread uses an instance, so the cache needs no lock.
    """

    def __init__(
        self,
        *,
        max_chars: int = 100_000,
        cache_size: int = 4096,
        cache_chars: int = 8_000_000,
        budget_per_second: float = 0.25,
        counters: Any = None,
    ) -> None:
        self.max_chars = max_chars
        self.cache_size = cache_size
        self.cache_chars = cache_chars
        self.budget = budget_per_second
        self.counters = counters
        self._cache: OrderedDict[tuple[str, str | None], SqlLineage] = OrderedDict()
        self._cache_chars = 0  # the statements' text the cache holds
        self._window_start = 0.0
        self._window_spent = 0.0

    def _bump(self, name: str) -> None:
        if self.counters is not None:
            self.counters.bump(name)

    def parse(self, sql: str, dialect: str | None) -> SqlLineage:
        key = (sql, dialect)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            self._bump("sql.cache_hits")
            return cached
        if len(sql) > self.max_chars:
            self._bump("sql.skipped_too_large")
            return EMPTY
        _load_dialect(dialect)  # a one-off import must not count against the budget
        now = time.perf_counter()
        if self._window_spent >= self.budget:
            # Over budget: the worker waits instead of dropping lineage; the bounded queue in
            # front of it absorbs (and counts) what a flood overflows. The wait is as long as
            # the spending asks, not just to the next second: one statement that took 3 s
            # would otherwise be forgotten at the roll-over, and a stream of them would keep
            # a core busy however small the budget.
            resume = self._window_start + self._window_spent / self.budget
            if now < resume:
                self._bump("sql.budget_waits")
                time.sleep(resume - now)
                now = time.perf_counter()
            self._window_start, self._window_spent = now, 0.0
        elif now - self._window_start >= 1.0:
            self._window_start, self._window_spent = now, 0.0
        try:
            result = parse_sql(sql, dialect)
        except Exception:
            self._bump("sql.parse_errors")
            result = EMPTY
        self._window_spent += time.perf_counter() - now
        self._bump("sql.parsed")
        self._cache[key] = result
        self._cache_chars += len(sql)
        # Bounded by entries and by the text they keep: 4,096 statements near the size cap
        # were 400 MB held for good.
        while len(self._cache) > self.cache_size or self._cache_chars > self.cache_chars:
            (evicted, _), _ = self._cache.popitem(last=False)
            self._cache_chars -= len(evicted)
        return result

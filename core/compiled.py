"""A queryset's statement compiled by the ORM once, to be sent again with one value bound
in: the SQL stays the ORM's (no rule of the catalog is written a second time), and the rows
read with it get the converters the ORM applies to its own results (a JSONField's text
parsed). One home for what ``core.prepared.RowByKey`` (the dataset detail's row, ADR 0124)
and ``api.keyset_rows.KeysetRows`` (the run list's pages, ADR 0123) both keep.
"""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CompiledRows:
    """One statement compiled: its text, its parameters with the bound value's index (None:
    nothing bound), the rows' column names and the converters Django applies to them."""

    sql: str
    params: tuple[Any, ...]
    at: int | None
    names: tuple[str, ...]
    converters: tuple[tuple[int, tuple[Any, ...], Any], ...]

    def params_with(self, value: Any) -> list[Any]:
        """The statement's parameters with ``value`` in the bound one's place."""
        params = list(self.params)
        if self.at is not None:
            params[self.at] = value
        return params

    def convert(self, name: str, value: Any, connection: Any) -> Any:
        """``value`` of the column ``name`` as the ORM gives it (its converters applied)."""
        index = self.names.index(name)
        for at, functions, expression in self.converters:
            if at == index:
                for function in functions:
                    value = function(value, expression, connection)
        return value

    def rows(self, fetched: list[tuple[Any, ...]], connection: Any) -> list[dict[str, Any]]:
        """``fetched`` as the ORM's ``values()`` dicts (what its results_iter applies)."""
        names = self.names
        if not self.converters:
            return [dict(zip(names, row, strict=True)) for row in fetched]
        rows = []
        for values in fetched:
            row = list(values)
            for index, functions, expression in self.converters:
                value = row[index]
                for function in functions:
                    value = function(value, expression, connection)
                row[index] = value
            rows.append(dict(zip(names, row, strict=True)))
        return rows


def compile_rows(queryset: Any, placeholder: Any = None) -> CompiledRows:
    """``queryset`` (a ``values()`` queryset) compiled; ``placeholder``: the value it was
    built with in the bound value's place, which must be exactly one of its parameters
    (ValueError otherwise: a statement that holds it twice, or rewrote it, cannot be
    bound)."""
    query = queryset.query
    compiler = query.get_compiler(queryset.db)
    sql, params = compiler.as_sql()
    at = None
    if placeholder is not None:
        found = [index for index, value in enumerate(params) if value == placeholder]
        if len(found) != 1:
            raise ValueError(f"the bound value is not one parameter of {sql!r}")
        at = found[0]
    names = tuple(query.selected) if query.selected else ()
    if not names:
        names = (*query.extra_select, *query.values_select, *query.annotation_select)
    fields = [selected[0] for selected in compiler.select[: compiler.col_count]]
    converters = tuple(
        (index, tuple(functions), expression)
        for index, (functions, expression) in compiler.get_converters(fields).items()
    )
    return CompiledRows(sql, tuple(params), at, names, converters)

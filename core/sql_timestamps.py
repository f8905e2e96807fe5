"""A ``timestamptz`` written by PostgreSQL as the answers write a UTC datetime (ADR 0129).

An answer writes a moment as ``YYYY-MM-DDTHH:MM:SS``, ``.ffffff`` only when the
microseconds are not zero, then ``Z`` (``datetime.isoformat`` of a UTC datetime with
``+00:00`` written ``Z``: ``api.marquez.shapes.ts``, orjson's ``OPT_UTC_Z``). Read as a
``datetime`` and written back, each costs Python ~2-3 µs (the loader's parse, then the
formatting); a graph of the Marquez mount shows ~1,500 of them. Written by PostgreSQL, the
text is fetched as it is, for ~0.3 µs of the server's CPU each.

``{moment:column}`` in a statement (``written``) becomes that text, NULL for a NULL. When the
session's DateStyle is ISO, a timestamp's text is ``YYYY-MM-DD HH:MM:SS`` with its fraction's
trailing zeros left out: padded to six digits, with a ``T``, it is the same text, at a fifth
of ``to_char``'s CPU (ADR 0114). A whole second padded gains seven zeros, which ``replace``
takes out again; no other text holds seven zeros in a row (a fraction has at most six
digits, its last one not zero, and the date and time are two-digit fields between
separators). Otherwise one ``to_char``, ``.000000`` taken out. The graph's prebuilt
statement (``catalog.lineage.prebuilt``) writes the same text inside quotes.
"""

import re
from typing import Any

_MOMENT = re.compile(r"\{moment:([a-z_.]+)\}")
# to_char's format: text in double quotes is written as it is; in the JSON string's
# format, \" is a double quote.
_FORMATS = {
    False: """'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'""",
    True: r"""'"\""YYYY-MM-DD"T"HH24:MI:SS.US"Z\""'""",
}


def moment_sql(column: str, iso: bool, *, quoted: bool = False) -> str:
    """The text of ``column`` as an answer writes it (NULL stays NULL); ``quoted``: as a JSON
    string, in its double quotes, for a statement that writes JSON text (ADR 0109)."""
    if iso:
        padded = f"replace(rpad(({column} AT TIME ZONE 'UTC')::text, 26, '0'), '0000000', '')"
        if quoted:
            return f"""'"' || replace({padded}, ' ', 'T') || 'Z"'"""
        return f"(replace({padded}, ' ', 'T') || 'Z')"
    written = f"to_char({column} AT TIME ZONE 'UTC', {_FORMATS[quoted]})"
    return f"replace({written}, '.000000Z', 'Z')"


def json_moment(column: str, nullable: bool, iso: bool) -> str:
    """``column`` as a JSON value in a statement writing JSON text: the quoted moment, or
    ``null`` for a NULL when it ``nullable``. The column is named once: an expression
    referenced twice is evaluated twice (ADR 0109 measured ~0.7 µs each)."""
    written = moment_sql(column, iso, quoted=True)
    return f"COALESCE({written}, 'null')" if nullable else written


def written(sql: str) -> dict[bool, str]:
    """``sql`` with each ``{moment:column}`` written out, by whether the session's DateStyle
    is ISO (``date_style_is_iso``)."""
    return {iso: _written(sql, iso) for iso in (True, False)}


def _written(sql: str, iso: bool) -> str:
    return _MOMENT.sub(lambda found: moment_sql(found[1], iso), sql)


def date_style_is_iso(connection: Any) -> bool:
    """Whether the Django ``connection``'s session writes timestamps in ISO style. The server
    reports DateStyle to the client on every change: no round trip."""
    connection.ensure_connection()
    return (connection.connection.info.parameter_status("DateStyle") or "").startswith("ISO")

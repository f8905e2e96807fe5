"""An unfiltered run page's items written as JSON text by PostgreSQL, in the statement that
reads the page: the bytes ``api.list_rows.run_item``'s dicts render to.

Why: a deep run page (50 runs) spent more of its Python on its rows than on anything else
(ADR 0130): psycopg made 350 datetimes, 100 UUIDs and 50 timedeltas, the ORM's converter
parsed 50 tag lists, ``run_item`` built 50 dicts of 19 keys, and the renderer wrote them
back out, twice with the byte cap. PostgreSQL writes the text in the statement it already
runs (ADR 0109's way for the graph), with the graph's spelling of a timestamp
(``core.sql_timestamps.json_moment``) and of a string (``to_json``): orjson's text, tested
in tests/api/test_graph_prebuilt_text.py.

What only Python can decide stays Python's, per row, spliced into the text between the
statement's pieces: the runId as sent is redacted as ``redact_text`` does (it is producer text),
the duration is ``timedelta.total_seconds()`` written by orjson (a float's shortest
spelling is orjson's), and a run whose tags are not ``[]`` has its item parsed back and
its tags set by ``visible`` as ``run_item`` sets them (steward-hidden tags left out), the
renderer writing that dict as before. Which rows are read is still the ORM's compiled
statement (``api.keyset_rows``), wrapped: ``SELECT <text> FROM (<the ORM's>) q``.
tests/api/test_run_item_text.py holds the items to ``run_item``'s, byte for byte once
rendered, for every column's edge (both DateStyles, NULLs, escapes, hidden tags, a runId
with a secret, fractional durations).
"""

from collections.abc import Callable
from typing import Any

import orjson

from api.label_serializers import TAG_KEYS, visible
from core.redaction import text_redactor
from core.rendering import RawJSON
from core.sql_timestamps import json_moment


def _text(column: str) -> str:
    return f'to_json(q."{column}")::text'


def _select(iso: bool) -> str:
    """The outer SELECT list: the position, the runId, the pieces between what Python
    writes (see the module's docstring), in ``run_item``'s key order. Every operand of
    ``||`` is text (ADR 0114)."""

    def moment(column: str) -> str:
        return json_moment(f'q."{column}"', True, iso)

    head = """'{"run_id":"' || q."run_uuid"::text || '","run_id_as_sent":'"""
    before_duration = (
        f"""',"job":{{"id":' || q."job_id"::text || ',"namespace":' || {_text("job__namespace")}"""
        f""" || ',"name":' || {_text("job__name")} || '}},"state":' || {_text("state")}"""
        f""" || ',"state_time":' || {moment("state_time")}"""
        f""" || ',"started_at":' || {moment("started_at")}"""
        f""" || ',"ended_at":' || {moment("ended_at")} || ',"duration_seconds":'"""
    )
    before_tags = (
        f"""',"nominal_start_time":' || {moment("nominal_start_time")}"""
        f""" || ',"nominal_end_time":' || {moment("nominal_end_time")}"""
        """ || ',"parent_run_id":' || COALESCE('"' || q."parent_uuid"::text || '"', 'null')"""
        f""" || ',"error_message":' || {_text("error_message")}"""
        """ || ',"is_streaming":' || q."is_streaming"::text"""
        """ || ',"is_placeholder":' || q."is_placeholder"::text || ',"tags":'"""
    )
    tail = (
        """',"shares_run_id":' || q."shares_run_id"::text"""
        f""" || ',"first_event_time":' || {moment("first_event_time")}"""
        f""" || ',"last_event_time":' || {moment("last_event_time")}"""
        """ || ',"lineage_edges_cut":' || q."lineage_edges_cut"::text || '}'"""
    )
    return (
        f'SELECT q."id", q."run_id_text", {head}, {_text("run_id_text")}, {before_duration},'
        f' q."duration", {before_tags}, q."tags", {tail}'
    )


_SELECTS = {iso: _select(iso) for iso in (True, False)}


def statement(rows_sql: str, ordering: tuple[str, ...], iso: bool) -> str:
    """``rows_sql`` (the ORM's statement for a page of ``RunQuerySet.list_rows``, ordered by
    ``ordering``) with its items written as text, in the same order."""
    order = ", ".join(
        f'q."{term[1:]}" DESC' if term.startswith("-") else f'q."{term}" ASC' for term in ordering
    )
    return f"{_SELECTS[iso]} FROM ({rows_sql}) AS q ORDER BY {order}"


def items(fetched: list[tuple[Any, ...]], tags_of: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """The page's rows as ``{"id": position, "item": what the answer shows}``: a ``RawJSON``,
    or for a run with tags the dict it parses to with ``run_item``'s tags. ``tags_of``: the
    ORM's conversion of the tags column (its JSONField's ``from_db_value``)."""
    rows = []
    redact = text_redactor()  # the configured lists looked up once a page
    for position, sent, head, sent_text, middle, duration, before_tags, tags, tail in fetched:
        redacted = redact(sent)
        if redacted != sent:
            sent_text = orjson.dumps(redacted).decode()
        seconds = "null" if duration is None else orjson.dumps(duration.total_seconds()).decode()
        text = head + sent_text + middle + seconds + before_tags + "[]" + tail
        if tags == "[]":
            rows.append({"id": position, "item": RawJSON(text)})
            continue
        item = orjson.loads(text)
        item["tags"] = visible(tags_of(tags), TAG_KEYS)
        rows.append({"id": position, "item": item})
    return rows

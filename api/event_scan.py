"""The event list's pages for filters no index serves in the list's order: a bounded scan.

``/api/v1/events`` lists newest id first. ``event_type``, ``kind``, ``job_namespace``,
``derivation_status=derived``, ``has_facet_problems=false`` and the received and event
times have no index in that order, and ``job_name`` and ``producer`` an md5 index that holds
no id: PostgreSQL walked the primary key back from the newest event until a page of matches
was found, or read every match through the md5 index and sorted them. For a value few
events hold, or a job whose events are all old, that read the whole log (420,003 events:
16,495 buffers for ``?event_type=FAIL``, 14,251 for an old job; ADR 0194) and, at 10M
events, ended in the read timeout's 503.

Such a request reads at most ``SCAN_ROWS`` events along the list's order from its cursor
(the primary key, or the pending, failed or facet-problem partial index when the request
also names that one), in one statement, and answers the matches among them: a page may be
short, or empty, while ``next`` continues the scan from the last event read. A filter with
an index of its own is asked how many events it matches, up to ``SCAN_ROWS + 1``; when it
has no more than ``SCAN_ROWS``, the page is read among those (all the matches, in one
page), so a rare value or an old job is answered at once, not after a walk of empty pages.
An eventTime window is asked first (its index holds the ids: an index-only read); a
``job_name`` or ``producer`` only after a scan came back short (each entry of an md5 index
costs a row read). Each request reads at most about four times ``SCAN_ROWS`` rows,
whatever the log's size.

A page read this way has cursors of the list's own kind (``p=<id>``, ``r=1`` backwards):
any of them continues either way. ``run_id`` and the dataset filters keep their own index
paths (a range of the run's index, ADR 0183; the dataset's links), as does a request that
names nothing but ordered filters.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import BooleanField, F, Q
from django.db.models.expressions import RawSQL, Window
from django.db.models.functions import MD5, RowNumber
from django.db.models.lookups import Exact
from django.db.models.sql.where import WhereNode
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor

from api.filters import UtcDateTimeField
from api.pagination import CursorPage, invalid_cursor
from ingest.models import DerivationStatus, DigestExact, Event

# Events one request reads along the list's order at most (and a rare value's own index):
# a walk of them with no match took 13-78 ms of PostgreSQL at load 8-10 (ADR 0194).
SCAN_ROWS = 20_000

# Filters answered on their own index, whatever else is named: the request is left as it was.
OWN_PATH = frozenset({"run_id", "dataset_id", "dataset_namespace", "dataset_name"})
# Values whose partial index walks the list's order: the scan walks it instead of the key.
ORDERED = {
    "derivation_status": {
        DerivationStatus.PENDING.value: Q(derivation_status=DerivationStatus.PENDING),
        DerivationStatus.FAILED.value: Q(derivation_status=DerivationStatus.FAILED),
    },
    "has_facet_problems": {
        value: Q(facet_problems__isnull=False) for value in ("true", "1", "yes")
    },
}
# Filters a short page asks their md5 index about (the eventTime window is asked first).
PROBED = ("job_name", "producer")


@dataclass(frozen=True)
class Scan:
    """How a request's page is read: the filtered queryset (its WHERE is what matches), the
    ordered partial index's condition the walk keeps to, and the request's parameters."""

    filtered: Any
    walk: Q
    params: Mapping[str, str]

    def window_probe(self) -> Any:
        """The ids of the events in the named eventTime window, on the (event_time, id)
        index (an index-only read: asked before the scan), or None without a window."""
        since, until = (_moment(self.params.get(name)) for name in ("since", "until"))
        if since is None and until is None:
            return None
        window = Event.objects.all()
        if since is not None:
            window = window.filter(event_time__gte=since)
        if until is not None:
            window = window.filter(event_time__lt=until)
        return window.order_by("event_time", "id").values_list("id", flat=True)

    def digest_probes(self) -> list[Any]:
        """The ids of the events of each named md5-indexed filter, in its index's order (so
        PostgreSQL reads that index and stops at the slice). Each row is read to recheck the
        value, so they are asked only after a scan came back short."""
        return [
            Event.objects.filter(**{name: value}).order_by(MD5(name)).values_list("id", flat=True)
            for name in PROBED
            if (value := self.params.get(name))
        ]


def scan_for(params: Mapping[str, str], filtered: Any, filter_names: Any) -> Scan | None:
    """The scan a list request needs, or None when its filters' indexes bound its page."""
    named = {name for name in filter_names if params.get(name)}
    if not named or named & OWN_PATH:
        return None
    ordered = {
        name: condition
        for name in named
        if (condition := ORDERED.get(name, {}).get(params[name].lower())) is not None
    }
    if named <= set(ordered):
        return None
    # One ordered index is walked; the other's condition is in the match like the rest: two
    # in the walk would let PostgreSQL read one index and filter by the other past the LIMIT.
    walk = ordered[min(ordered)] if ordered else Q()
    return Scan(filtered, walk, params)


def _moment(value: str | None) -> Any:
    return UtcDateTimeField().to_python(value) if value else None


@dataclass(frozen=True)
class ScanWindow:
    """What one scan read: the matches (in scan order) and, when it stopped at the cap with
    events left, the id of the last event it read."""

    matches: list[Any]
    stopped_at: int | None


def scanned(scan: Scan, position: int | None, reverse: bool, wanted: int, rows: int) -> ScanWindow:
    """At most ``rows`` events after ``position`` in the list's order (ids below it, or
    above it going back), of which the first ``wanted`` that match ``scan.filtered``.

    One statement, so one snapshot: the walk (``LIMIT rows + 1``, each row's id, whether
    it matches and its number) inside; outside it the matches and the walk's last two rows,
    whose LIMIT stops the walk as soon as ``wanted`` matches are found; then those few rows
    read whole by their key. The filtered queryset's WHERE is compiled as the match (the
    ORM's text: no filter is spelled twice). The walk carries no payload: a window over
    whole rows cost twice the time (ADR 0194)."""
    filtered = scan.filtered
    compiler = filtered.query.get_compiler(filtered.db)
    match_sql, match_params = compiler.compile(_plain(filtered.query.where))
    order = F("id").asc() if reverse else F("id").desc()
    walk = Event.objects.filter(scan.walk)
    if position is not None:
        walk = walk.filter(**{"id__gt" if reverse else "id__lt": position})
    numbered = (
        walk.order_by(order)
        .annotate(
            scan_match=RawSQL(match_sql, match_params, output_field=BooleanField()),
            scan_row=Window(RowNumber(), order_by=order),
        )
        .values("id", "scan_match", "scan_row")[: rows + 1]
    )
    walk_sql, walk_params = numbered.query.sql_with_params()
    direction = "ASC" if reverse else "DESC"
    table = Event._meta.db_table
    sql = (
        f"SELECT event.*, scan.scan_match, scan.scan_row FROM (SELECT * FROM ({walk_sql}) AS walk "
        "WHERE (walk.scan_match AND walk.scan_row <= %s) OR walk.scan_row >= %s "
        f"ORDER BY walk.id {direction} LIMIT %s) AS scan "
        f'JOIN "{table}" AS event ON event.id = scan.id ORDER BY scan.id {direction}'
    )
    found: list[Any] = list(Event.objects.raw(sql, (*walk_params, rows, rows, wanted + 2)))
    matches = [event for event in found if event.scan_match and event.scan_row <= rows]
    last = {event.scan_row: event.id for event in found if event.scan_row >= rows}
    stopped = last.get(rows) if rows + 1 in last and len(matches) < wanted else None
    return ScanWindow(matches[:wanted], stopped)


def among_few(
    scan: Scan, probes: list[Any], position: int | None, reverse: bool, wanted: int, rows: int
) -> Any:
    """The page read among the events of the first of ``probes`` that has at most ``rows``
    of them (all the matches are among those, so the page is whole), or None when none is
    that rare."""
    for probe in probes:
        ids = list(probe[: rows + 1])
        if len(ids) > rows:
            continue
        page = scan.filtered.filter(id__in=RawSQL("SELECT unnest(%s::bigint[])", (ids,)))
        if position is not None:
            page = page.filter(**{"id__gt" if reverse else "id__lt": position})
        return list(page.order_by("id" if reverse else "-id")[:wanted])
    return None


def _plain(node: Any) -> Any:
    """``node`` (a WHERE tree) with each ``md5(column) = md5(value) AND column = value`` as
    ``column = value``: the md5 is there for its index, and a walk along the key computed
    it for every event it read (a third of the scan's time for ``?job_name=``)."""
    if isinstance(node, DigestExact):
        return Exact(node.lhs, node.rhs)
    if isinstance(node, WhereNode):
        return WhereNode([_plain(child) for child in node.children], node.connector, node.negated)
    return node


class EventPage(CursorPage):
    """The event list's cursor pages; a request ``scan_for`` names is read by ``scanned``."""

    scanning = False
    next_id: int | None = None
    previous_id: int | None = None

    def paginate_queryset(self, queryset: Any, request: Any, view: Any = None) -> Any:
        scan = getattr(view, "event_scan", None)
        self.scanning = scan is not None
        if scan is None:
            return super().paginate_queryset(queryset, request, view)
        try:
            return self._scanned_page(scan, request)
        except NotFound as error:  # DRF's undecodable cursor
            raise invalid_cursor() from error

    def _scanned_page(self, scan: Scan, request: Any) -> list[Any]:
        self.request = request
        self._model = Event
        self.page_size = self.get_page_size(request)
        self.base_url = request.build_absolute_uri()
        self.ordering = ("-id",)
        self.cursor = self.decode_cursor(request)
        offset, reverse, raw = self.cursor or (0, False, None)
        if offset:  # no cursor served here has one: ids never tie
            raise invalid_cursor()
        position = None if raw is None else int(raw)
        rows = SCAN_ROWS
        wanted = self.page_size + 1
        window = [probe] if (probe := scan.window_probe()) is not None else []
        few = among_few(scan, window, position, reverse, wanted, rows)
        if few is not None:  # a narrow eventTime window: its index said how few first
            matches, stopped = few, None
        else:
            scanned_window = scanned(scan, position, reverse, wanted, rows)
            matches, stopped = scanned_window.matches, scanned_window.stopped_at
        if stopped is not None:
            few = among_few(scan, scan.digest_probes(), position, reverse, wanted, rows)
            if few is not None:
                matches, stopped = few, None
        items = matches[: self.page_size]
        # The ids the next and previous pages start after: the last item when more matched,
        # the last event read when the scan stopped there.
        onward = items[-1].id if len(matches) > len(items) else stopped
        if position is None:
            back = None
        elif items:
            back = items[0].id
        else:  # nothing here: back from the cursor's own event, which this page did not read
            # Kept within bigint: a forged cursor at its end served a link its own check
            # refuses (p=2^63); no event has the end's id, so none is skipped (ADR 0207).
            back = min(max(position + (1 if reverse else -1), -(2**63)), 2**63 - 1)
        self.page = list(reversed(items)) if reverse else items
        self.next_id, self.previous_id = (back, onward) if reverse else (onward, back)
        self.has_next = self.next_id is not None
        self.has_previous = self.previous_id is not None
        return self.page

    def cap_bytes(self, data: Any) -> Any:
        before = len(self.page or [])
        kept = super().cap_bytes(data)
        page = self.page or []
        if self.scanning and len(page) < before:
            # Cut at the byte budget: the next page starts after the last item kept (or, back,
            # before the first), as the items left out were matches.
            if self.cursor and self.cursor.reverse:
                self.previous_id = page[0].id
            else:
                self.next_id = page[-1].id
        return kept

    def get_next_link(self) -> str | None:
        if not self.scanning:
            return super().get_next_link()
        if self.next_id is None:
            return None
        return self.encode_cursor(Cursor(offset=0, reverse=False, position=self.next_id))

    def get_previous_link(self) -> str | None:
        if not self.scanning:
            return super().get_previous_link()
        if self.previous_id is None:
            return None
        return self.encode_cursor(Cursor(offset=0, reverse=True, position=self.previous_id))

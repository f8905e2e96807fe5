"""Query-parameter parsing for the non-model endpoints; bad values are 400 problems."""

from collections.abc import Mapping
from datetime import UTC, datetime

from django.http import QueryDict
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework.request import Request

from api.problems import bad_parameter, not_found
from core.redaction import redact_text


class BadMoment(ValueError):
    """A date-time parameter that is not one; its message says why, for any API's error."""


def parse_moment(raw: str, *, dates: bool = True) -> datetime:
    """An ISO 8601 date-time (or, with ``dates``, a date) in UTC; zone-less values are UTC.

    The one parser of every read API's moments (this API and the Marquez mount): a
    well-formed impossible date (``2026-02-30``) or an offset PostgreSQL refuses is a
    ``BadMoment``, never the ``ValueError`` or ``OverflowError`` it raises deeper down.
    """
    try:
        value = parse_datetime(raw)
        if value is None and dates:
            day = parse_date(raw)
            value = datetime(day.year, day.month, day.day) if day else None
    except ValueError:
        raise BadMoment("the date does not exist.") from None
    if value is None:
        raise BadMoment("expected an ISO 8601 date-time, e.g. 2026-11-01T00:00:00Z.")
    try:
        # PostgreSQL refuses offsets beyond ±15:59: normalise to UTC here.
        return value.replace(tzinfo=UTC) if timezone.is_naive(value) else value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise BadMoment("the time is out of range.") from None


def moment(request: Request, name: str) -> datetime | None:
    """An ISO 8601 date or date-time; zone-less values are UTC."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return parse_moment(raw)
    except BadMoment as error:
        raise bad_parameter(name, str(error)) from None


def nul_parameter(query: QueryDict, path_values: Mapping[str, object]) -> str | None:
    """The name of the first path or query parameter (name or value) holding a NUL.

    PostgreSQL text cannot hold NUL, so such a value would end in a database error (a 500)
    wherever it reached a query: every read view asks this once, before its handler runs.
    """
    for name, value in path_values.items():
        if isinstance(value, str) and "\x00" in value:
            return name
    for name, values in query.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "\\0")
    return None


def integer(request: Request, name: str, default: int, low: int, high: int) -> int:
    value = integer_within(request.query_params.get(name), default, low, high)
    if value is None:
        raise bad_parameter(name, f"expected an integer from {low} to {high}.")
    return value


def integer_within(raw: str | None, default: int, low: int, high: int) -> int | None:
    """``raw`` as an integer from ``low`` to ``high``; ``default`` when it is absent or
    empty, None when it is not such an integer (the caller says which problem that is)."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if low <= value <= high else None


# The spellings of a boolean parameter, on every read endpoint (a view's and a filter's):
# anything else is a 400, never read as "no filter".
TRUE_WORDS = frozenset({"true", "1", "yes"})
FALSE_WORDS = frozenset({"false", "0", "no"})


def truth(raw: str) -> bool | None:
    """``raw`` as a boolean, whatever its case; None when it is no spelling of one."""
    lowered = raw.lower()
    if lowered in TRUE_WORDS:
        return True
    if lowered in FALSE_WORDS:
        return False
    return None


def boolean(request: Request, name: str, default: bool = False) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    value = truth(raw)
    if value is None:
        raise bad_parameter(name, "expected true or false.")
    return value


def choice(request: Request, name: str, choices: tuple[str, ...], default: str) -> str:
    raw = request.query_params.get(name) or default
    if raw not in choices:
        raise bad_parameter(name, f"expected one of {', '.join(choices)}.")
    return raw


def required(request: Request, name: str) -> str:
    raw = request.query_params.get(name, "")
    if not raw.strip():
        raise bad_parameter(name, "this parameter is required.")
    if "\x00" in raw:
        raise bad_parameter(name, "NUL characters are not allowed.")
    return raw


def row_id(value: str, what: str) -> int:
    """A path's ``{id}`` as a row id: anything but an integer a bigint holds is a 404 (the
    database would refuse it with a 500), said in the words of a missing row."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 0 < number < 2**63:
        raise not_found(f"No {what} has id {value}.")
    return number


def shown_as_is(name: str, value: str) -> str:
    """``value``, a parameter matched exactly against producer text the API shows redacted
    (an event's producer, namespace, job name, runId as sent), refused when redaction would
    change it: found or not would confirm a guess of what the answers hide, as ``/metadata``
    refuses a filter on a redacted key (docs/security.md). A value redaction leaves alone
    finds only rows whose text is shown as it is."""
    if value and redact_text(value) != value:
        raise bad_parameter(name, "Redacted values cannot be filtered on.")
    return value

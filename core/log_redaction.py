"""Log records and command output redacted like answers (issue 38, item 9).

Logs quote producer text: a derivation error names the dataset it could not read
(``derive_event_failed event=7 error=BadEvent: ... 'postgres://svc:PW@db:5432'``), Kafka
refusals quote the message, a request path carries its query. Every record goes through
``core.redaction`` (``redact_text`` for its message, traceback and stack, ``redact`` for
the extra fields the JSON formatter writes) once, when it is made, whatever logger makes it
and whatever handler writes it: our console handler, Celery's when it takes the root
logger, Django's own, pytest's capture, an operator's. That is ``Logger.makeRecord``,
wrapped when logging is configured (``LOGGING_CONFIG = "core.log_redaction.configure"`` in
every settings module; ``install`` says why there). ``RedactingFilter``, on every handler
of ``LOGGING``, redacts records made otherwise (``logging.makeLogRecord``, a library
building a ``LogRecord`` itself); a record is redacted once, whichever comes first, and
again if it was changed after.

A record's message is formatted when it is made (its arguments are producer text too, and a
secret key may be in the format and its value in an argument), so its ``args`` are empty
afterwards; named arguments (one mapping) are kept, each redacted, for the formatters that
read them by name. An exception is kept on the record (handlers that report
exceptions still get it) unless its formatted traceback held a secret: formatters that
format it again (python-json-logger does) would show the secret, so the record then carries
only the redacted traceback, in ``exc_text``.

Management commands whose output quotes producer text write through
``core.command_output.RedactedOutput``.
"""

import logging
import logging.config
from collections.abc import Mapping
from typing import Any

from core.redaction import REDACTED, redact, redact_text

_DONE = "_lineage_redacted"
# What every record has: the rest are a logger call's ``extra`` fields.
_STANDARD = {
    *vars(logging.LogRecord("", 0, "", 0, "", None, None)),
    "message",
    "asctime",
    "taskName",
}
_TRACEBACKS = logging.Formatter()
_MAX_DEPTH = 32  # of an extra field's containers; deeper ones are shown as text


def redact_record(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message, arguments, traceback, stack and extra fields redacted."""
    if _unchanged_since_redacted(record):
        return record
    try:
        _redact(record)
    except Exception as error:  # a log call must never fail, nor show what it could not redact
        record.msg = f"{REDACTED}: log record not redacted ({type(error).__name__})"
        record.args, record.exc_info, record.exc_text, record.stack_info = (), None, None, None
    # What it held once redacted: a record changed afterwards is redacted again
    # (``logging.makeLogRecord`` has the factory make an empty record, then fills it in).
    setattr(record, _DONE, _held(record))
    return record


# Set by formatters from what was redacted: no change to the record's content.
_FORMATTED = {_DONE, "message", "asctime"}


def _held(record: logging.LogRecord) -> dict[str, Any]:
    return {name: value for name, value in vars(record).items() if name not in _FORMATTED}


def _unchanged_since_redacted(record: logging.LogRecord) -> bool:
    redacted = vars(record).get(_DONE)
    if redacted is None:
        return False
    held = _held(record)
    return len(held) == len(redacted) and all(
        held.get(name, redacted) is value for name, value in redacted.items()
    )


def _redact(record: logging.LogRecord) -> None:
    if isinstance(record.msg, dict | list) and not record.args:
        record.msg = _redacted(record.msg)  # structured: the JSON formatter writes its fields
    elif isinstance(record.args, Mapping) and record.args:
        # Named arguments (``%(path)s``) that formatters read by name, like granian's access
        # record (config/server.py): each redacted, the format kept.
        record.msg, record.args = redact_text(str(record.msg)), _redacted(dict(record.args))
    else:
        try:
            text = record.getMessage()
        except Exception:  # arguments that do not fit the format: shown side by side
            text = f"{record.msg} {record.args!r}"
        record.msg, record.args = redact_text(text), ()
    if record.exc_info and record.exc_info[0] is not None:
        formatted = _TRACEBACKS.formatException(record.exc_info)
        record.exc_text = redact_text(formatted)
        if record.exc_text != formatted:
            record.exc_info = None
    elif record.exc_text:
        record.exc_text = redact_text(record.exc_text)
    if record.stack_info:
        record.stack_info = redact_text(record.stack_info)
    extra = {name: value for name, value in vars(record).items() if name not in _STANDARD}
    for name, value in extra.items():
        if not name.startswith("_"):
            setattr(record, name, _redacted(value))


def _redacted(value: Any, depth: int = 0) -> Any:
    """An extra field redacted: JSON-like values by ``redact``, anything else by its text
    (kept as it is when its text holds no secret)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict | list | tuple) and depth < _MAX_DEPTH:
        return redact(_plain(value, depth))
    text = str(value)
    shown = redact_text(text)
    return value if shown == text else shown


def _plain(value: Any, depth: int) -> Any:
    """Containers as ``redact`` walks them (dicts and lists), their items redacted first
    when ``redact`` would pass them by (tuples, other objects)."""
    if isinstance(value, dict):
        return {str(key): _plain_item(item, depth) for key, item in value.items()}
    return [_plain_item(item, depth) for item in value]


def _plain_item(item: Any, depth: int) -> Any:
    if isinstance(item, dict | list | tuple) and depth + 1 < _MAX_DEPTH:
        return _plain(item, depth + 1)
    return _redacted(item, _MAX_DEPTH)  # a leaf, or a container too deep: by its text


class RedactingFilter(logging.Filter):
    """On every handler of ``LOGGING``: redacts a record no logger made, or one changed since
    (never drops one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def install() -> None:
    """Make every log record of this process redacted when a logger makes it (idempotent).

    Where: ``Logger.makeRecord``, which returns the record whole. A log record factory
    (``logging.setLogRecordFactory``) runs before the call's ``extra`` fields are added to
    the record, so it could not redact them; a logger class (``logging.setLoggerClass``)
    reaches only loggers made after it is set, not those modules made at import.
    """
    make = logging.Logger.makeRecord
    if getattr(make, "redacts", False):
        return

    def make_record(self: logging.Logger, *args: Any, **kwargs: Any) -> logging.LogRecord:
        return redact_record(make(self, *args, **kwargs))

    make_record.redacts = True  # type: ignore[attr-defined]
    logging.Logger.makeRecord = make_record  # type: ignore[method-assign]


def configure(config: dict[str, Any]) -> None:
    """``LOGGING_CONFIG``: Django's ``dictConfig`` of ``LOGGING``, every record redacted."""
    install()
    logging.config.dictConfig(config)

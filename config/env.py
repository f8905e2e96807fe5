"""Typed helpers that read settings from the environment.

Every helper also honours ``NAME_FILE`` (the path of a file holding the value), which is how
Kubernetes and Docker secrets are usually mounted.
"""

import math
import os
from pathlib import Path
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

_MISSING = object()
_Number = TypeVar("_Number", int, float)


def _raw(name: str) -> str | None:
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        try:
            return Path(file_path).read_text(encoding="utf-8").strip()
        # Not text (a key made by ``head -c 32 /dev/urandom``) is a UnicodeDecodeError: a
        # traceback where config.server prints ImproperlyConfigured as one line.
        except (OSError, UnicodeDecodeError) as error:
            raise ImproperlyConfigured(
                f"{name}_FILE={file_path!r} cannot be read as UTF-8 text: {error}"
            ) from error
    return os.environ.get(name)


def env_str(name: str, default: object = _MISSING) -> str:
    value = _raw(name)
    if value is None or value == "":
        if default is _MISSING:
            raise ImproperlyConfigured(
                f"The environment variable {name} (or {name}_FILE) is required."
            )
        return str(default)
    return value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true/false).")


def env_int(
    name: str, default: int, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError as error:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from error
    return _within(name, value, number, minimum, maximum)


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError as error:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from error
    bounded = minimum is not None or maximum is not None
    if bounded and not math.isfinite(number):  # float() takes "nan", which no bound refuses
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number.")
    return _within(name, value, number, minimum, maximum)


def _within(
    name: str, value: str, number: _Number, minimum: _Number | None, maximum: _Number | None
) -> _Number:
    """``number``, refused in one line naming the setting when it is outside the bounds
    given (each optional)."""
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        if minimum is not None and maximum is not None:
            allowed = f"from {minimum} to {maximum}"
        else:
            allowed = f"at least {minimum}" if minimum is not None else f"at most {maximum}"
        raise ImproperlyConfigured(f"{name}={value!r} must be {allowed}.")
    return number


# granian gives a worker at most its share of its 1,024-connection backlog at once (all of
# it with one worker): more threads than that never run a request.
MOST_WEB_THREADS = 1024


def web_threads() -> int:
    """``WEB_THREADS`` (8): a web process's request threads, read by the server that starts
    them (config/server.py) and by the body-read bound inside them (config/wsgi.py, ADR
    0197), which leaves one of them to requests without a body: so at least 2. At most
    ``MOST_WEB_THREADS``: past it the bound's places (threads - 1) would be more than ever
    run, and from 2^64 granian's workers died converting it, a traceback each (ADR 0209)."""
    return env_int("WEB_THREADS", 8, minimum=2, maximum=MOST_WEB_THREADS)


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None or value == "":
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_prefixed(prefix: str, exclude: set[str]) -> dict[str, str]:
    """Every ``PREFIX_NAME`` (or ``PREFIX_NAME_FILE``) set in the environment, as
    ``{"NAME": value}``, except the names in ``exclude``; a pass-through for a client's own
    settings (LINEAGE_KAFKA_SASL_PASSWORD_FILE → {"SASL_PASSWORD": <the file's content>})."""
    names = set()
    for variable in os.environ:
        if variable.startswith(prefix):
            name = variable[len(prefix) :]
            names.add(name[: -len("_FILE")] if name.endswith("_FILE") else name)
    values = {}
    for name in sorted(names - exclude):
        value = _raw(prefix + name)
        if name and value is not None and value != "":
            values[name] = value
    return values

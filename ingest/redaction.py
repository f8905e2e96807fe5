"""Redaction of secrets in events on the way out (API, export, admin).

Producers put credentials in facets more often than anyone would like: Debezium sends its
connector configuration as ``"database.password=postgres"`` strings, Spark and Airflow
send environment variables and connection URIs. The raw log keeps the event as received
(it is the source of truth); every read path passes payloads through ``redact``.

A key is secret when its lower-cased name contains one of ``LINEAGE["REDACT_KEYS"]``.
Three shapes are redacted: ``{"password": "x"}`` (a secret key's value), ``"password=x"``
or ``"password: x"`` strings (configuration lists), and the password of URLs with user
info (``postgres://user:secret@host``).
"""

import re
from functools import lru_cache
from typing import Any

from django.conf import settings

REDACTED = "***REDACTED***"
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][\w+.-]*://[^/\s:@]+:)(?P<secret>[^@\s/]+)(?=@)")


@lru_cache(maxsize=8)
def _patterns(keys: tuple[str, ...]) -> tuple[tuple[str, ...], re.Pattern[str]]:
    alternatives = "|".join(re.escape(key) for key in keys)
    assignment = re.compile(
        rf"^(?P<key>[^=:\s]*(?:{alternatives})[^=:\s]*)(?P<sep>\s*[=:]\s*)(?P<value>.+)$",
        re.IGNORECASE | re.DOTALL,
    )
    return keys, assignment


def _configured_keys() -> tuple[str, ...]:
    return tuple(key.lower() for key in settings.LINEAGE.get("REDACT_KEYS", ()))


def redact(document: Any, keys: tuple[str, ...] | None = None) -> Any:
    """A copy of ``document`` with secrets replaced by ``***REDACTED***``."""
    secret_keys, assignment = _patterns(keys if keys is not None else _configured_keys())
    if not secret_keys:
        return document

    def is_secret(key: str) -> bool:
        lowered = key.lower()
        return any(secret in lowered for secret in secret_keys)

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: REDACTED
                if is_secret(key) and isinstance(value[key], str | int | float)
                else walk(value[key])
                for key in value
            }
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, str):
            match = assignment.match(value)
            if match:
                return f"{match['key']}{match['sep']}{REDACTED}"
            if "://" in value and "@" in value:
                return _URL_PASSWORD.sub(rf"\g<head>{REDACTED}", value)
        return value

    return walk(document)

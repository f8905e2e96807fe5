"""Swallow, count and log every failure once (rate-limited); raise only in strict mode.

The collector must never break its host, so every entry point funnels its exceptions
through :func:`report`. Tests turn on strict mode (``LINEAGE_SILENT_FAIL=false``) to see them.
"""

import logging
import time
from collections import Counter

logger = logging.getLogger("lineage_collector")

_LOG_EVERY_SECONDS = 60.0


class CollectorError(RuntimeError):
    """Raised only in strict mode, for a failure the collector would otherwise swallow."""


class Counters:
    """Process-wide counters; increments are plain dict updates under the GIL."""

    def __init__(self) -> None:
        self.values: Counter[str] = Counter()
        self._last_logged: dict[tuple[str, str], float] = {}
        self.first_error: BaseException | None = None

    def bump(self, name: str, amount: int = 1) -> None:
        self.values[name] += amount

    def should_log(self, where: str, kind: str) -> bool:
        key = (where, kind)
        now = time.monotonic()
        last = self._last_logged.get(key)
        if last is not None and now - last < _LOG_EVERY_SECONDS:
            return False
        self._last_logged[key] = now
        return True

    def reset(self) -> None:
        self.values.clear()
        self._last_logged.clear()
        self.first_error = None


counters = Counters()


def report(where: str, error: BaseException, *, strict: bool = False) -> None:
    """Count ``error`` under ``errors.<where>``, log it (at most once a minute), maybe raise."""
    counters.bump(f"errors.{where}")
    if counters.first_error is None:
        counters.first_error = error
    if counters.should_log(where, type(error).__name__):
        logger.warning(
            "lineage_collector.error where=%s error=%s: %s", where, type(error).__name__, error
        )
    if strict:
        raise CollectorError(f"{where}: {error}") from error

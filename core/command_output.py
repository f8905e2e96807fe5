"""Command output redacted like answers and logs (issue 38, item 9).

A management command that prints producer text (a refusal's reason quoting the event, a
derivation error) mixes in ``RedactedOutput``: every write to its ``stdout`` and ``stderr``
goes through ``core.redaction.redact_text``, the one redaction function of read paths and
logs (core/log_redaction.py).
"""

from collections.abc import Callable
from typing import Any

from django.core.management.base import OutputWrapper

from core.redaction import redact_text


class _RedactingWriter:
    """An ``OutputWrapper`` whose every write is redacted (the rest passes through)."""

    def __init__(self, wrapper: OutputWrapper) -> None:
        object.__setattr__(self, "_wrapper", wrapper)

    def write(
        self,
        msg: str = "",
        style_func: Callable[[str], str] | None = None,
        ending: str | None = None,
    ) -> None:
        self._wrapper.write(redact_text(msg), style_func, ending)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapper, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._wrapper, name, value)  # style_func, set by BaseCommand.execute


class RedactedOutput:
    """Mixin for a management command that prints producer text (``class Command(
    RedactedOutput, BaseCommand)``): what it writes to ``self.stdout`` and ``self.stderr``,
    its ``CommandError`` messages included, goes through ``redact_text``."""

    @property
    def stdout(self) -> Any:
        return self._redacted_stdout

    @stdout.setter
    def stdout(self, wrapper: OutputWrapper) -> None:
        self._redacted_stdout = _RedactingWriter(wrapper)

    @property
    def stderr(self) -> Any:
        return self._redacted_stderr

    @stderr.setter
    def stderr(self, wrapper: OutputWrapper) -> None:
        self._redacted_stderr = _RedactingWriter(wrapper)

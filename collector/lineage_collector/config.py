"""Configuration from the environment, OpenLineage's own variables first."""

import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any

_FALSE = {"0", "false", "no", "off"}
_TRUE = {"1", "true", "yes", "on"}


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return default


def _number(name: str, default: float) -> float:
    # "nan" and "inf" parse as floats but are no setting: int(nan) raised out of install(),
    # and an infinite exit flush would hold the process at exit while the catalog is down.
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) else default


_HEADER_BREAKING = re.compile(r"[\x00-\x1f\x7f]")


def bearer_header(api_key: str | None) -> dict[str, str]:
    """The ``Authorization`` header for ``api_key`` (none without one).

    Surrounding whitespace is no part of a token: a key read from a secret file or a
    Kubernetes secret often ends in a newline, which http.client refused with an error
    quoting the whole header, token included, that the collector then logged once a
    minute. A control character inside the key raises an error that does not quote it.
    """
    token = (api_key or "").strip()
    if not token:
        return {}
    if _HEADER_BREAKING.search(token):
        raise ValueError("the API key holds a control character, which no header can carry")
    return {"Authorization": f"Bearer {token}"}


def disabled_in_environment() -> bool:
    """``OPENLINEAGE_DISABLED``, for senders that can be used without ``install()``."""
    return _flag("OPENLINEAGE_DISABLED", False)


@dataclass(frozen=True)
class Config:
    """Everything the collector needs; ``Config.from_env()`` reads it, keywords override."""

    url: str | None = None
    endpoint: str = "api/v1/lineage"
    api_key: str | None = None
    namespace: str = "default"
    disabled: bool = False
    silent_fail: bool = True
    timeout: float = 2.0
    # The most a synchronous call (emit_edge, MetadataAPI.send) holds its caller, in all.
    call_timeout: float = 5.0
    queue_size: int = 10_000
    batch_size: int = 100
    flush_interval: float = 0.5
    exit_flush_timeout: float = 2.0
    max_statement_chars: int = 100_000
    parse_budget: float = 0.25
    capture_s3_metadata_calls: bool = False
    transport: Any = field(default=None, compare=False)

    @classmethod
    def from_env(cls, **overrides: Any) -> "Config":
        """Read ``OPENLINEAGE_*`` and ``LINEAGE_*`` variables; keyword arguments win."""
        config = cls(
            url=os.environ.get("OPENLINEAGE_URL") or None,
            endpoint=os.environ.get("OPENLINEAGE_ENDPOINT") or "api/v1/lineage",
            api_key=os.environ.get("OPENLINEAGE_API_KEY") or None,
            namespace=os.environ.get("OPENLINEAGE_NAMESPACE") or "default",
            disabled=_flag("OPENLINEAGE_DISABLED", False),
            silent_fail=_flag("LINEAGE_SILENT_FAIL", True),
            timeout=_number("LINEAGE_TIMEOUT", 2.0),
            call_timeout=_number("LINEAGE_CALL_TIMEOUT", 5.0),
            queue_size=int(_number("LINEAGE_QUEUE_SIZE", 10_000)),
            exit_flush_timeout=_number("LINEAGE_EXIT_FLUSH_TIMEOUT", 2.0),
            capture_s3_metadata_calls=_flag("LINEAGE_CAPTURE_S3_METADATA", False),
        )
        return replace(config, **overrides)

    @property
    def batch_url(self) -> str | None:
        """Where batches are posted: ``{url}/{endpoint}/batch``."""
        if not self.url:
            return None
        return f"{self.url.rstrip('/')}/{self.endpoint.strip('/')}/batch"

    def api_url(self, path: str) -> str | None:
        """A catalog URL outside the lineage endpoint (edges, metadata)."""
        if not self.url:
            return None
        return f"{self.url.rstrip('/')}/{path.lstrip('/')}"

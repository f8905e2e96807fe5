"""Generic metadata/audit records: ``MetadataModel`` and the ``MetadataAPI`` client."""

import json
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lineage_collector.config import disabled_in_environment
from lineage_collector.deadline_http import post_json
from lineage_collector.errors import report
from lineage_collector.runtime import RUNTIME

metadata_logger = logging.getLogger("lineage_collector.metadata")


@dataclass
class MetadataModel:
    """One record: who (``subject``) did what (``action``) to which ``resource``, and when."""

    subject: str
    action: str
    resource: str = field(default_factory=lambda: uuid.uuid4().hex)
    timestamp: datetime = field(default_factory=lambda: datetime.now(tz=UTC))
    additional_values: dict[str, str] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """The JSON body ``/api/v1/metadata`` takes."""
        return {
            "resource": self.resource,
            "subject": self.subject,
            "action": self.action,
            "timestamp": self.timestamp.isoformat(),
            "additionalValues": {key: str(value) for key, value in self.additional_values.items()},
        }


class MetadataAPI:
    """Sends metadata records: ``backend="http"`` posts to the catalog, ``"logging"`` logs.

    ``send`` is synchronous, holds its caller at most ``timeout`` seconds in all (default
    ``LINEAGE_CALL_TIMEOUT``, 5) and returns False instead of raising (unless
    ``LINEAGE_SILENT_FAIL=false``).
    """

    def __init__(
        self,
        backend: str = "http",
        *,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        if backend not in {"http", "logging"}:
            raise ValueError("backend must be 'http' or 'logging'")
        self.backend = backend
        self.url = url
        self.api_key = api_key
        self.timeout = timeout

    def _endpoint(self) -> str | None:
        if self.url:
            return f"{self.url.rstrip('/')}/api/v1/metadata"
        return RUNTIME.config.api_url("api/v1/metadata")

    def send(self, records: MetadataModel | list[MetadataModel]) -> bool:
        """Send one record or several (one request); True when the catalog stored them."""
        try:
            # Inside the guard: a record that cannot be encoded is a False, not an exception
            # in the caller's success path.
            items = records if isinstance(records, list) else [records]
            payload = [item.to_payload() for item in items]
            if self.backend == "logging":
                for item in payload:
                    metadata_logger.info(json.dumps(item, separators=(",", ":")))
                return True
            endpoint = self._endpoint()
            if endpoint is None or RUNTIME.config.disabled or disabled_in_environment():
                return False  # OPENLINEAGE_DISABLED: nothing sent, by any API
            body: Any = payload if isinstance(records, list) else payload[0]
            config = RUNTIME.config
            seconds = config.call_timeout if self.timeout is None else self.timeout
            return post_json(endpoint, body, self.api_key or config.api_key, seconds)
        except Exception as error:
            report("metadata", error, strict=not RUNTIME.config.silent_fail)
            return False

"""The catalog's read API over HTTP, as a producer harness's user reads it (test_dbt_ol.py,
test_airflow.py), the transport both harnesses configure, and the JSON-lines files it
writes."""

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any


class Api:
    """The read API over HTTP with a read token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url, self.token = base_url, token

    def get(self, path: str, **params: Any) -> Any:
        return self._read(f"/api/v1/{path}", params)

    def marquez(self, path: str, **params: Any) -> Any:
        """The Marquez-compatible mount (/marquez/api/v1), as Marquez's UI and client ask."""
        return self._read(f"/marquez/api/v1/{path}", params)

    def _read(self, path: str, params: dict[str, Any]) -> Any:
        query = urllib.parse.urlencode(params, doseq=True)
        request = urllib.request.Request(
            f"{self.base_url}{path}" + (f"?{query}" if query else ""),
            headers={"Authorization": f"Bearer {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def all(self, path: str, **params: Any) -> list[dict[str, Any]]:
        page = self.get(path, limit=500, **params)
        items = list(page["results"])
        while page.get("next"):
            with urllib.request.urlopen(
                urllib.request.Request(
                    page["next"], headers={"Authorization": f"Bearer {self.token}"}
                ),
                timeout=30,
            ) as response:
                page = json.loads(response.read())
            items += page["results"]
        return items


def lines(path: Path) -> list[dict[str, Any]]:
    """The events of a JSON-lines file, in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recording_transport(base_url: str, ingest_token: str, record: Path) -> dict[str, Any]:
    """openlineage-python's transport for a harness: every event posted to the catalog and
    also appended to ``record``, so a test compares what was sent with what was stored."""
    return {
        "type": "composite",
        "continue_on_failure": False,
        "transports": {
            "catalog": {
                "type": "http",
                "url": base_url,
                "endpoint": "api/v1/lineage",
                "auth": {"type": "api_key", "apiKey": ingest_token},
            },
            "record": {"type": "file", "log_file_path": str(record), "append": True},
        },
    }

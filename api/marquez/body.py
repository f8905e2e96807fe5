"""The JSON body of the mount's writes (``PUT /tags/{tag}``), read as ingest reads one.

DRF's default ``JSONParser`` is the standard library's recursive decoder with no bound on
size or nesting: a body of 5,000 ``[`` was a RecursionError, a 500, and a body of any size
was read whole into memory. This parser reads at most ``MAX_BODY_BYTES`` (a tag's
description is 2,000 characters) and parses with ``ingest.parsing.parse_json``: strict
UTF-8, no duplicate keys, nesting bounded by ``MAX_JSON_DEPTH``. Its refusals are
problems, which the mount answers as 400s in Marquez's shape.
"""

from typing import Any

from rest_framework.parsers import BaseParser

from core.problems import Problem
from ingest.parsing import parse_json

# Far above any description's JSON (2,000 characters, each at most a 12-byte escape).
MAX_BODY_BYTES = 64 * 1024


class BoundedJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        data = stream.read(MAX_BODY_BYTES + 1)
        if len(data) > MAX_BODY_BYTES:
            raise Problem(
                status=400,
                slug="invalid-json",
                title=f"The body is larger than {MAX_BODY_BYTES} bytes",
            )
        return parse_json(data)

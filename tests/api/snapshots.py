"""Answers pinned byte for byte: a status, a digest and a length per request path.

A read rewritten for speed must answer exactly as before; the snapshot tests request a fixed
store's paths and compare each answer with the file taken before the rewrite. With the
named environment variable set to 1 they write the file instead (an intended change, which
the commit must explain)."""

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def assert_answers_unchanged(bodies: dict[str, Any], answers: Path, write_variable: str) -> None:
    found = {
        path: [
            response.status_code,
            hashlib.sha256(response.content).hexdigest(),
            len(response.content),
        ]
        for path, response in bodies.items()
    }
    if os.environ.get(write_variable) == "1":
        answers.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n")
    expected = json.loads(answers.read_text())
    assert sorted(found) == sorted(expected)
    for path, answer in found.items():
        assert answer == expected[path], path

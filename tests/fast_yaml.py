"""YAML read by libyaml's parser (PyYAML's C loader) where the tests read large documents:
the committed OpenAPI schema (183 KB: 0.40-0.44 CPU s with the pure-Python SafeLoader, 0.06-0.08
with CSafeLoader) and every rendered Helm chart (0.05 s against 0.006). Both loaders build the
same safe types; tests/test_fast_yaml.py checks that they give the same documents here. Where
PyYAML was built without libyaml, the pure-Python loader is used (ADR 0199)."""

from collections.abc import Iterator
from typing import Any

import yaml

LOADER: Any = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def load(text: str) -> Any:
    return yaml.load(text, Loader=LOADER)


def load_all(text: str) -> Iterator[Any]:
    return yaml.load_all(text, Loader=LOADER)

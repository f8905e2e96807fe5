"""Steward alias rules, the write side: load them from a file, upsert them by slug.

How rules apply to names is catalog/names/rules.py (read by derivation and lookups alike).
"""

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from django.db import transaction

from catalog.models import AliasRule
from catalog.names.rules import compile_pattern

RULE_FIELDS = (
    "description",
    "action",
    "namespace",
    "name_pattern",
    "target_namespace",
    "target_name",
    "priority",
    "enabled",
)


def read_rules_file(path: Path) -> list[dict[str, Any]]:
    """Rules from a JSON list (or ``{"rules": [...]}``) or a TOML file with ``[[rules]]``."""
    text = path.read_text()
    data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    if isinstance(data, dict):
        data = data.get("rules", [])
    if not isinstance(data, list):
        raise ValueError("expected a list of rules")
    return data


def load_alias_rules(rules: list[dict[str, Any]], replace: bool = False) -> tuple[int, int, int]:
    """Upsert rules by slug; with ``replace`` delete the rules not in the list.

    Returns (created, updated, deleted). Rules change how *future* events are derived; run
    ``manage.py rederive`` to apply them to the whole log.
    """
    created = updated = deleted = 0
    with transaction.atomic():
        slugs = []
        for item in rules:
            slug = item["slug"]
            try:  # fail before storing a bad pattern
                compile_pattern(item.get("name_pattern", "(.*)"))
            except re.error as error:
                raise ValueError(f"rule {slug!r}: name_pattern refused: {error}") from error
            defaults = {key: item[key] for key in RULE_FIELDS if key in item}
            _, was_created = AliasRule.objects.update_or_create(slug=slug, defaults=defaults)
            created += was_created
            updated += not was_created
            slugs.append(slug)
        if replace:
            deleted, _ = AliasRule.objects.exclude(slug__in=slugs).delete()
    return created, updated, deleted

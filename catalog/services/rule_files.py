"""Steward alias rules, the write side: load them from a file, upsert them by slug.

How rules apply to names is catalog/names/rules.py (read by derivation and lookups alike).
"""

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
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
# A rules file is a steward's list, a few KB a rule: far under this. Read no more than it,
# so a wrong path (a dump, /dev/zero) is refused instead of filling the memory.
MAX_FILE_BYTES = 16 * 1024 * 1024


def read_rules_file(path: Path) -> list[dict[str, Any]]:
    """Rules from a JSON list (or ``{"rules": [...]}``) or a TOML file with ``[[rules]]``."""
    with path.open("rb") as stream:
        read = stream.read(MAX_FILE_BYTES + 1)
    if len(read) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES} bytes; a rules file is far smaller")
    text = read.decode()
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
    with transaction.atomic():  # a refused rule stores none of the file's
        slugs = []
        for number, item in enumerate(rules, start=1):
            slug = _slug(number, item)
            try:  # fail before storing a bad pattern
                compile_pattern(item.get("name_pattern", "(.*)"))
            except (re.error, TypeError) as error:
                raise ValueError(f"rule {slug!r}: name_pattern refused: {error}") from error
            rule = AliasRule.objects.select_for_update().filter(slug=slug).first()
            was_created = rule is None
            rule = rule or AliasRule(slug=slug)
            for key in RULE_FIELDS:
                if key in item:
                    setattr(rule, key, item[key])
            _validate(rule)
            rule.save()
            created += was_created
            updated += not was_created
            slugs.append(slug)
        if replace:
            deleted, _ = AliasRule.objects.exclude(slug__in=slugs).delete()
    return created, updated, deleted


def _slug(number: int, item: Any) -> str:
    """The rule's slug, once the rule is a table with a slug and only the known keys (a
    misspelt ``name_pattern`` would otherwise leave the default, which matches every name)."""
    if not isinstance(item, dict):
        raise ValueError(f"rule {number} is not a table of keys (slug, action, ...)")
    if "slug" not in item:
        raise ValueError(f"rule {number} has no slug")
    unknown = sorted(map(str, set(item) - {"slug", *RULE_FIELDS}))
    if unknown:
        raise ValueError(f"rule {item['slug']!r}: unknown keys {', '.join(unknown)}")
    return str(item["slug"])


def _validate(rule: AliasRule) -> None:
    """What the admin's form checks (choices, lengths, slug, types, the pattern): a rule it
    would refuse is refused here too, never stored for derivation to meet."""
    try:
        rule.full_clean(validate_unique=False, validate_constraints=False)
        values = [getattr(rule, key) for key in ("slug", *RULE_FIELDS)]
        if any(isinstance(value, str) and "\x00" in value for value in values):
            raise ValidationError("a value holds a NUL character")
    except ValidationError as error:
        problems = (
            "; ".join(f"{field}: {' '.join(texts)}" for field, texts in error.message_dict.items())
            if hasattr(error, "error_dict")
            else " ".join(error.messages)
        )
        raise ValueError(f"rule {rule.slug!r}: {problems}") from error

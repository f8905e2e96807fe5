"""Steward alias rules: rewrite a name before it is stored, or equate it with another name.

A rule matches a normalised namespace exactly and the whole name against ``name_pattern``
(a Python regular expression); ``target_name`` is the replacement template. Rules apply in
(priority, slug) order: every matching *rewrite* rule applies once, in turn, then every
matching *equate* rule adds one equivalent name. A matching *detach* rule (a steward's
split) keeps the name out of every link, so it stays its own dataset. Rules are read once
per derivation batch.
"""

import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from catalog import naming


@dataclass(frozen=True)
class CompiledRule:
    id: int
    slug: str
    action: str
    namespace: str
    pattern: re.Pattern[str]
    target_namespace: str
    target_name: str

    def apply(self, namespace: str, name: str) -> tuple[str, str] | None:
        if namespace != self.namespace:
            return None
        match = self.pattern.fullmatch(name)
        if match is None:
            return None
        return naming.normalise(self.target_namespace, match.expand(self.target_name))


class RuleSet:
    def __init__(self, rules: Iterable[CompiledRule]) -> None:
        rules = list(rules)
        self.rewrites = [rule for rule in rules if rule.action == "rewrite"]
        self.equates = [rule for rule in rules if rule.action == "equate"]
        self.detaches = [rule for rule in rules if rule.action == "detach"]

    def rewrite(self, namespace: str, name: str) -> tuple[str, str]:
        for rule in self.rewrites:
            result = rule.apply(namespace, name)
            if result is not None:
                namespace, name = result
        return namespace, name

    def equivalents(self, namespace: str, name: str) -> list[tuple[CompiledRule, str, str]]:
        found = []
        for rule in self.equates:
            result = rule.apply(namespace, name)
            if result is not None and result != (namespace, name):
                found.append((rule, *self.rewrite(*result)))
        return found

    def is_detached(self, namespace: str, name: str) -> bool:
        return any(
            rule.namespace == namespace and rule.pattern.fullmatch(name) is not None
            for rule in self.detaches
        )

    def __bool__(self) -> bool:
        return bool(self.rewrites or self.equates or self.detaches)


def compile_rule(rule: Any) -> CompiledRule:
    return CompiledRule(
        id=rule.id,
        slug=rule.slug,
        action=rule.action,
        namespace=naming.normalise_namespace(rule.namespace),
        pattern=re.compile(rule.name_pattern),
        target_namespace=rule.target_namespace,
        target_name=rule.target_name,
    )


def active_rules() -> RuleSet:
    """The enabled rules, in application order (one query)."""
    from catalog.models import AliasRule

    return RuleSet(compile_rule(rule) for rule in AliasRule.objects.filter(enabled=True))


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
    from catalog.models import AliasRule

    created = updated = deleted = 0
    with transaction.atomic():
        slugs = []
        for item in rules:
            slug = item["slug"]
            re.compile(item.get("name_pattern", "(.*)"))  # fail before storing a bad pattern
            defaults = {key: item[key] for key in RULE_FIELDS if key in item}
            _, was_created = AliasRule.objects.update_or_create(slug=slug, defaults=defaults)
            created += was_created
            updated += not was_created
            slugs.append(slug)
        if replace:
            deleted, _ = AliasRule.objects.exclude(slug__in=slugs).delete()
    return created, updated, deleted

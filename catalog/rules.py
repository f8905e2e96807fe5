"""Steward alias rules: rewrite a name before it is stored, or equate it with another name.

A rule matches a normalised namespace exactly and the whole name against ``name_pattern``
(a Python regular expression); ``target_name`` is the replacement template. Rules apply in
(priority, slug) order: every matching *rewrite* rule applies once, in turn, then every
matching *equate* rule adds one equivalent name. A matching *detach* rule (a steward's
split) keeps the name out of every link, so it stays its own dataset. Rules are read once
per derivation batch. Loading rules (the write side) is catalog/services/rules.py.

Patterns run on names that readers send (``/datasets/lookup``) and on every derived name,
so a catastrophic pattern would stall a web worker or a derivation worker. Two defences
(docs/security.md): ``check_pattern`` refuses, when a rule is saved, the shapes that
backtrack exponentially (a repeat inside a repeat, ``(a+)+``; backreferences); and every
match runs with a time limit (the ``regex`` engine's ``timeout``, same syntax as ``re``),
a name that exceeds it counts as not matching and is logged.
"""

import logging
import re
import re._constants as sre_constants  # the parsed form of a pattern: what check_pattern reads
import re._parser as sre_parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex

from catalog import naming

logger = logging.getLogger(__name__)
# The most one match of one rule may take; about 10,000 times what a sane pattern needs.
MATCH_SECONDS = 0.05
_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
_BACKREFERENCES = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS}


class UnsafePattern(re.error):
    """A valid pattern refused because matching it can take exponential time."""


def check_pattern(pattern: str) -> None:
    """Raise ``re.error`` (``UnsafePattern`` for a catastrophic shape) unless ``pattern``
    is a valid regular expression whose matching time stays polynomial."""
    parsed = sre_parse.parse(pattern)

    def walk(items: Any, inside_repeat: bool) -> None:
        for op, value in items:
            if op in _BACKREFERENCES:
                raise UnsafePattern("backreferences are not allowed in alias rules")
            if op in _REPEATS:
                _, high, sub = value
                repeats = high > 1  # MAXREPEAT (unbounded) included
                if repeats and inside_repeat:
                    raise UnsafePattern(
                        "a repeated group contains another repeat (like (a+)+): matching it "
                        "can take exponential time; repeat the group or its content, not both"
                    )
                walk(sub, inside_repeat or repeats)
            elif op is sre_constants.SUBPATTERN:
                walk(value[-1], inside_repeat)
            elif op is sre_constants.BRANCH:
                for branch in value[1]:
                    walk(branch, inside_repeat)
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                walk(value[1], inside_repeat)
            elif op is sre_constants.ATOMIC_GROUP:
                walk(value, inside_repeat)

    walk(parsed, False)


def compile_pattern(pattern: str) -> Any:
    """The pattern checked and compiled for bounded matching (a ``regex`` pattern)."""
    check_pattern(pattern)
    try:
        return regex.compile(pattern)
    except regex.error as error:
        raise re.error(str(error)) from error


def fullmatch(pattern: Any, name: str) -> Any:
    """``pattern.fullmatch(name)`` within ``MATCH_SECONDS``; no match when it takes longer."""
    try:
        return pattern.fullmatch(name, timeout=MATCH_SECONDS)
    except TimeoutError:
        logger.warning(
            "alias rule pattern %r timed out on a name of %d characters; treated as no match",
            pattern.pattern,
            len(name),
        )
        return None


@dataclass(frozen=True)
class CompiledRule:
    id: int
    slug: str
    action: str
    namespace: str
    pattern: Any  # a ``regex`` pattern: matched with a time limit (``fullmatch`` below)
    target_namespace: str
    target_name: str

    def apply(self, namespace: str, name: str) -> tuple[str, str] | None:
        if namespace != self.namespace:
            return None
        match = fullmatch(self.pattern, name)
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
            rule.namespace == namespace and fullmatch(rule.pattern, name) is not None
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
        pattern=compile_pattern(rule.name_pattern),
        target_namespace=rule.target_namespace,
        target_name=rule.target_name,
    )


def active_rules() -> RuleSet:
    """The enabled rules, in application order (one query)."""
    from catalog.models import AliasRule

    compiled = []
    for rule in AliasRule.objects.filter(enabled=True):
        try:
            compiled.append(compile_rule(rule))
        except re.error as error:  # saved before patterns were checked: never run it
            logger.error("alias rule %r is skipped: %s", rule.slug, error)
    return RuleSet(compiled)


def alias_key(namespace: str, name: str, rules: RuleSet | None = None) -> bytes:
    """The key a dataset name is stored under: normalised, rewrite rules applied, hashed.

    Every lookup of a dataset by a name it was called (the read API's filters and lookup,
    the admin search) goes through here, so it finds what derivation stored. Pass
    ``rules`` to key many names with one read of the rules.
    """
    rules = active_rules() if rules is None else rules
    return naming.key_hash(*rules.rewrite(*naming.normalise(namespace, name)))

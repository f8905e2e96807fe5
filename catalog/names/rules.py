"""Steward alias rules: rewrite a name before it is stored, or equate it with another name.

A rule matches a normalised namespace exactly and the whole name against ``name_pattern``
(a Python regular expression); ``target_name`` is the replacement template. Rules apply in
(priority, slug) order: every matching *rewrite* rule applies once, in turn, then every
matching *equate* rule adds one equivalent name. A matching *detach* rule (a steward's
split) keeps the name out of every link, so it stays its own dataset. Rules are read once
per derivation batch. Loading rules (the write side) is catalog/services/rule_files.py.

Patterns run on names that readers send (``/datasets/lookup``) and on every derived name,
so a slow pattern would stall a web worker or a derivation worker. Patterns are written in
Python's syntax and matched by RE2 (catalog/names/patterns.py, ADR 0057), in time linear in
the name whatever the pattern; what RE2 cannot run (backreferences, lookarounds) is refused
when a rule is saved, and so is a repeat inside a repeat (``(a+)+``), as before. Derivation
also bounds the matching time of one event's names together (``RuleSet.start_event``): an
event that spends more than ``EVENT_MATCH_SECONDS`` fails with that reason, nothing of it
derived, and derives in full when re-derived (docs/security.md).
"""

import logging
import re
import re._parser as sre_parse
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import re2

from catalog.names import naming
from catalog.names.patterns import PatternRefused, to_re2

logger = logging.getLogger(__name__)
# The most matching one event's names may take in derivation, all rules and names together.
# RE2 matches a rule against a name in 4-16 µs here (docs/benchmarks.md): 2 s is over a
# hundred thousand name-rule matches, and caps what one event can hold a worker for.
EVENT_MATCH_SECONDS = 2.0
# How much longer than the name it was given a rule's result may be. Each rule applies once,
# in turn, so rules whose templates repeat a group (``\1\1``) would otherwise double a name
# per rule: 21 of them made a 10-character name 21 MB, took 12 s of a lookup request and
# 11 s of one event's derivation, and a few more exhaust a worker's memory. A rule whose
# result is longer is not applied (the same in derivation and in lookups, so both agree).
NAME_GROWTH_MAX = 2000
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is told to the steward, not to stderr


class MatchBudgetSpent(Exception):
    """One event's names took more than ``EVENT_MATCH_SECONDS`` to match."""


def compile_pattern(pattern: str) -> Any:
    """The pattern checked and compiled for RE2 (``re.error`` when refused, with why)."""
    translated = to_re2(pattern)  # one parse: UnsafePattern, PatternRefused or re.error
    try:
        return _Pattern(pattern, re2.compile(translated, _RE2_OPTIONS), re.compile(pattern))
    except re2.error as error:
        message = (
            error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else error
        )
        raise PatternRefused(f"RE2 cannot compile it: {message}") from error


@dataclass(frozen=True)
class _Pattern:
    """A rule's pattern: RE2 matches, Python's own compiled form reads replacement templates
    (``\\1``, ``\\g<name>``) exactly as ``re`` does; it never matches a name."""

    pattern: str
    re2: Any
    python: Any

    def fullmatch(self, name: str) -> Any:
        return self.re2.fullmatch(name)

    def expand(self, match: Any, template: str) -> str:
        return sre_parse.expand_template(sre_parse.parse_template(template, self.python), match)


def fullmatch(pattern: Any, name: str) -> Any:
    """``pattern``'s match of the whole ``name`` (RE2: linear in the name), or None."""
    return pattern.fullmatch(name)


@dataclass(frozen=True)
class CompiledRule:
    id: int
    slug: str
    action: str
    namespace: str
    pattern: Any  # a ``_Pattern``: RE2 matches (``fullmatch`` above)
    target_namespace: str
    target_name: str

    def apply(self, namespace: str, name: str) -> tuple[str, str] | None:
        if namespace != self.namespace:
            return None
        match = fullmatch(self.pattern, name)
        if match is None:
            return None
        return naming.normalise(self.target_namespace, self.pattern.expand(match, self.target_name))


class RuleSet:
    def __init__(self, rules: Iterable[CompiledRule]) -> None:
        rules = list(rules)
        self.rewrites = [rule for rule in rules if rule.action == "rewrite"]
        self.equates = [rule for rule in rules if rule.action == "equate"]
        self.detaches = [rule for rule in rules if rule.action == "detach"]
        self._deadline: float | None = None  # no bound outside derivation (one name: linear)

    def start_event(self, seconds: float | None = None) -> None:
        """Bound the matching from now on (derivation calls this per event): past the
        budget every match raises ``MatchBudgetSpent``."""
        budget = EVENT_MATCH_SECONDS if seconds is None else seconds
        self._deadline = time.perf_counter() + budget if self else None

    def _check(self) -> None:
        if self._deadline is not None and time.perf_counter() > self._deadline:
            raise MatchBudgetSpent(
                f"matching this event's dataset names against the alias rules took over "
                f"{EVENT_MATCH_SECONDS:g} s; nothing of it was derived: re-derive it "
                "(the events admin's re-derive action, or manage.py rederive) once the rules "
                "are fixed"
            )

    def rewrite(self, namespace: str, name: str) -> tuple[str, str]:
        self._check()
        longest = len(name) + NAME_GROWTH_MAX
        for rule in self.rewrites:
            self._check()  # per rule: one name's rules together stay within the budget
            result = _within(rule, rule.apply(namespace, name), longest)
            if result is not None:
                namespace, name = result
        return namespace, name

    def equivalents(self, namespace: str, name: str) -> list[tuple[CompiledRule, str, str]]:
        self._check()
        longest = len(name) + NAME_GROWTH_MAX
        found = []
        for rule in self.equates:
            self._check()
            result = _within(rule, rule.apply(namespace, name), longest)
            if result is not None and result != (namespace, name):
                found.append((rule, *self.rewrite(*result)))
        return found

    def is_detached(self, namespace: str, name: str) -> bool:
        self._check()
        return any(
            rule.namespace == namespace and fullmatch(rule.pattern, name) is not None
            for rule in self.detaches
        )

    def __bool__(self) -> bool:
        return bool(self.rewrites or self.equates or self.detaches)


def _within(
    rule: CompiledRule, result: tuple[str, str] | None, longest: int
) -> tuple[str, str] | None:
    """``result``, or None (the rule is not applied) when its name is longer than
    ``longest``: see ``NAME_GROWTH_MAX``."""
    if result is None or len(result[1]) <= longest:
        return result
    logger.warning(
        "alias_rule_not_applied rule=%s reason=name_growth length=%d longest=%d",
        rule.slug,
        len(result[1]),
        longest,
    )
    return None


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


def alias_key(namespace: str, name: str, rules: RuleSet) -> bytes:
    """The key a dataset name is stored under: normalised, ``rules`` rewrites applied,
    hashed. With the rules in force now: ``catalog.models.identity.stored_key``."""
    return naming.key_hash(*rules.rewrite(*naming.normalise(namespace, name)))

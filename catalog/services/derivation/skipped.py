"""Facets that derivation must not use: those ingest recorded as unusable (ADR 0004).

Ingest stores an event whose facets break their schemas and records each problem with the
facet it belongs to and whether the facet is still usable. Derivation reads the event with
the unusable facets removed, so every reader below (facts.py) sees only facets it can trust
and needs no special case.
"""

from collections.abc import Iterable
from typing import Any


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def skipped_facets(problems: Any) -> frozenset[str]:
    """The JSON Pointers of the facets marked ``skipped`` in an event's ``facet_problems``."""
    if not isinstance(problems, list):
        return frozenset()
    return frozenset(
        problem["facet"]
        for problem in problems
        if isinstance(problem, dict) and problem.get("skipped") and problem.get("facet")
    )


def without(payload: Any, pointers: Iterable[str]) -> Any:
    """``payload`` minus the values at ``pointers``; containers on the way are copied, the
    stored payload is never changed."""
    for pointer in sorted(pointers):
        parts = [_unescape(part) for part in pointer.split("/")[1:]]
        if not parts:
            continue
        payload = _remove(payload, parts)
    return payload


def _remove(node: Any, parts: list[str]) -> Any:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        if head not in node:
            return node
        copy = dict(node)
        if rest:
            copy[head] = _remove(node[head], rest)
        else:
            del copy[head]
        return copy
    if isinstance(node, list) and head.isdigit() and int(head) < len(node):
        index = int(head)
        copy_list = list(node)
        if rest:
            copy_list[index] = _remove(node[index], rest)
        else:
            copy_list[index] = None
        return copy_list
    return node

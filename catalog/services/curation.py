"""Steward curation: preview and apply alias rules, merge datasets, split aliases off.

Stewards never edit derived rows. Every curation is stored as steward input that the
derivation reads (an ``AliasRule``, which a full ``rederive`` keeps), recorded in the admin
log (``LogEntry``: who, when, what) and then applied by re-deriving the events concerned
with the catalog's own services (catalog/services/rederive_jobs.py in the background).
See docs/admin.md and ADRs 0040-0043, 0046.
"""

import itertools
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import IntegrityError, OperationalError, connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from catalog.models import AliasRule, AliasRuleAction, Dataset, DatasetAlias
from catalog.names import naming
from catalog.names.rules import RuleSet, compile_rule
from catalog.services.audit import log_curation
from catalog.services.derivation.datasets import detach_alias, lock_for_split
from catalog.services.derivation.edges import recompute_edges
from catalog.services.derivation.job_edges import recompute_job_edges
from catalog.services.rederive_jobs import (
    MAX_SELECTED_EVENTS,
    rederive_event_ids,
    schedule_rederive,
)

logger = logging.getLogger(__name__)

# A preview scans the aliases of one namespace; it shows at most this many matches.
PREVIEW_LIMIT = 200
# What a preview, which runs in the steward's request, may read and spend: the first
# PREVIEW_SCAN_LIMIT aliases of the namespace (as read), the read cut by a statement timeout,
# the matching by PREVIEW_SECONDS; past either bound it says where it stopped.
PREVIEW_SCAN_LIMIT = 50_000
PREVIEW_SECONDS = 1.0
PREVIEW_STATEMENT_TIMEOUT_MS = 2000
# What saving a rule reads to find the events to re-derive (matched by RE2, linear).
APPLY_SCAN_LIMIT = 500_000
# Applying a rule re-derives one event per matched alias; up to this many run in the request.
APPLY_INLINE_LIMIT = 200


# --- alias rule preview ------------------------------------------------------------------


@dataclass
class PreviewRow:
    alias: DatasetAlias
    target_namespace: str
    target_name: str
    target_alias: DatasetAlias | None
    regroups: bool  # True when the alias would join another dataset


@dataclass
class RulePreview:
    rows: list[PreviewRow] = field(default_factory=list)
    matched: int = 0
    regrouped: int = 0
    datasets_merged: int = 0
    scanned: int = 0
    truncated: bool = False
    stopped: str = ""  # why the scan stopped before the namespace's end, for the page
    error: str = ""


def preview_rule(rule: AliasRule) -> RulePreview:
    """Which existing aliases ``rule`` (saved or not) matches, and where each would go.

    For an *equate* rule the matched alias and its target become one dataset; for a
    *rewrite* rule new events name the target instead. Other enabled rules are applied to
    the target as the derivation would, so the preview shows the final name.
    """
    preview = RulePreview()
    try:
        compiled = compile_rule(rule)
    except re.error as error:
        preview.error = f"invalid name pattern: {error}"
        return preview
    others = RuleSet(
        compile_rule(other) for other in AliasRule.objects.filter(enabled=True).exclude(id=rule.id)
    )
    matches = _scan_for_preview(preview, compiled, others)
    preview.truncated = bool(preview.stopped) or preview.matched > PREVIEW_LIMIT
    shown = matches[:PREVIEW_LIMIT]
    aliases = DatasetAlias.objects.select_related("dataset").in_bulk([row[0] for row in shown])
    targets = {
        bytes(alias.key_hash): alias
        for alias in DatasetAlias.objects.select_related("dataset").filter(
            key_hash__in=[naming.key_hash(row[2], row[3]) for row in shown]
        )
    }
    merged_pairs = set()
    for alias_id, dataset_id, target_namespace, target_name in shown:
        target_alias = targets.get(naming.key_hash(target_namespace, target_name))
        regroups = bool(
            target_alias is not None
            and target_alias.dataset_id is not None
            and target_alias.dataset_id != dataset_id
        )
        if rule.action == AliasRuleAction.REWRITE and target_alias is None:
            regroups = True  # the name changes: future events land on a new alias
        if regroups and target_alias is not None:
            merged_pairs.add(tuple(sorted((dataset_id or 0, target_alias.dataset_id or 0))))
        preview.regrouped += regroups
        preview.rows.append(
            PreviewRow(aliases[alias_id], target_namespace, target_name, target_alias, regroups)
        )
    preview.datasets_merged = len(merged_pairs)
    return preview


def _scan_for_preview(
    preview: RulePreview, compiled: Any, others: RuleSet
) -> list[tuple[int, int | None, str, str]]:
    """The namespace's aliases ``compiled`` moves, within the preview's bounds."""
    matches: list[tuple[int, int | None, str, str]] = []
    deadline = time.perf_counter() + PREVIEW_SECONDS
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL statement_timeout = {int(PREVIEW_STATEMENT_TIMEOUT_MS)}")
            cursor.execute(
                # No order: the namespace's rows as they are read (a sample, not the lowest ids,
                # which the planner would find by walking the whole table in id order).
                "SELECT id, name, dataset_id FROM catalog_dataset_alias WHERE namespace = %s "
                "LIMIT %s",
                [compiled.namespace, PREVIEW_SCAN_LIMIT + 1],
            )
            rows = cursor.fetchall()
    except OperationalError as error:  # the statement timeout: the namespace is too large
        if "statement timeout" not in str(error):
            raise
        preview.stopped = (
            f"Preview stopped: reading this namespace's names took over "
            f"{PREVIEW_STATEMENT_TIMEOUT_MS / 1000:g} s, so no name was matched. Saving the "
            "rule applies it to every name all the same."
        )
        return matches
    for alias_id, name, dataset_id in rows[:PREVIEW_SCAN_LIMIT]:
        if time.perf_counter() > deadline:
            preview.stopped = (
                f"Preview stopped after {preview.scanned:,} names (its {PREVIEW_SECONDS:g} s "
                "budget); the counts are of those. Saving the rule applies it to every name."
            )
            return matches
        preview.scanned += 1
        target = compiled.apply(compiled.namespace, name)
        if target is None or target == (compiled.namespace, name):
            continue
        target = others.rewrite(*target)
        preview.matched += 1
        matches.append((alias_id, dataset_id, *target))
    if len(rows) > PREVIEW_SCAN_LIMIT:
        preview.stopped = (
            f"Preview stopped after {PREVIEW_SCAN_LIMIT:,} names (the first read of the "
            "namespace); "
            "the counts are of those. Saving the rule applies it to every name."
        )
    return matches


# --- applying rules and merges ------------------------------------------------------------


def sample_events_for_rule(rule: AliasRule) -> list[int]:
    """One event per alias the rule matches (of the namespace's first ``APPLY_SCAN_LIMIT``
    aliases): re-deriving it creates the rule's link.

    Derivation only ever adds links, so one event naming an alias is enough to join it to
    its target; the rest of the alias's events would add nothing.
    """
    compiled = compile_rule(rule)
    alias_ids = [
        alias_id
        for alias_id, name in DatasetAlias.objects.filter(namespace=compiled.namespace)
        .order_by()
        .values_list("id", "name")[:APPLY_SCAN_LIMIT]
        .iterator(chunk_size=5000)
        if compiled.apply(compiled.namespace, name) is not None
    ]
    return _first_event_per_alias(alias_ids, len(alias_ids))


def _first_event_per_alias(alias_ids: Sequence[int], limit: int) -> list[int]:
    if not alias_ids:
        return []
    with connection.cursor() as cursor:
        # One index probe per alias on catalog_event_dataset_uniq (alias, event, role).
        cursor.execute(
            """
            SELECT (SELECT min(event_id) FROM catalog_event_dataset WHERE alias_id = a.id)
            FROM unnest(%s::bigint[]) AS a(id) LIMIT %s
            """,
            [list(alias_ids), limit],
        )
        return sorted({row[0] for row in cursor.fetchall() if row[0] is not None})


def apply_rule(rule: AliasRule, user: Any) -> tuple[int, int | None]:
    """Re-derive what the rule changes, after commit. Returns (events, the first background
    job's id).

    A few events are re-derived in the request so the steward sees the regrouping at once;
    more go to background re-derives with progress (RederiveJobs), as many as it takes: a
    job holds at most ``MAX_SELECTED_EVENTS`` events, and a rule matching more aliases than
    that left the others in their old datasets (until a full rederive).
    """
    if not rule.enabled:
        return 0, None
    event_ids = sample_events_for_rule(rule)
    if not event_ids:
        return 0, None
    if len(event_ids) <= APPLY_INLINE_LIMIT:
        transaction.on_commit(partial(rederive_event_ids, event_ids))
        return len(event_ids), None
    starts = range(0, len(event_ids), MAX_SELECTED_EVENTS)
    job_ids = [
        schedule_rederive(
            user,
            event_ids=event_ids[start : start + MAX_SELECTED_EVENTS],
            reason=f"apply alias rule {rule.slug}"
            + (f" (part {part} of {len(starts)})" if len(starts) > 1 else ""),
        )
        for part, start in enumerate(starts, start=1)
    ]
    return len(event_ids), job_ids[0]


def merge_as_steward(user: Any, survivor: Dataset, other: Dataset) -> AliasRule:
    """Make ``other`` and ``survivor`` one dataset, as a steward-asserted equate rule.

    The rule (created_by, created_at) is the durable assertion: derivation applies it to
    every event naming ``other``'s display name, and a full rederive keeps it because rules
    are steward input, not derived rows. The events naming ``other`` are re-derived now.
    """
    if survivor.pk == other.pk:
        raise ValueError("choose two different datasets")
    with transaction.atomic():  # the rule and its log entry, or neither
        rule = _steward_rule(
            user,
            f"steward-merge-{other.pk}-into-{survivor.pk}",
            AliasRuleAction.EQUATE,
            (other.namespace, other.name),
            (survivor.namespace, survivor.name),
            priority=50,
            what=f"merge: {other.namespace}/{other.name} is {survivor.namespace}/{survivor.name}.",
        )
        # The rule fires on events naming other's display alias: re-derive one of those.
        alias_ids = list(
            DatasetAlias.objects.filter(
                dataset=other, key_hash=naming.key_hash(other.namespace, other.name)
            ).values_list("id", flat=True)
        ) or list(DatasetAlias.objects.filter(dataset=other).values_list("id", flat=True))
        event_ids = _first_event_per_alias(alias_ids, MAX_SELECTED_EVENTS)
        log_curation(user, rule, f"merged dataset #{other.pk} into #{survivor.pk}", rule=rule.slug)
        if event_ids:
            transaction.on_commit(partial(rederive_event_ids, event_ids))
    return rule


def split_alias(user: Any, alias: DatasetAlias) -> AliasRule:
    """Split ``alias`` off its dataset into a dataset of its own, as a steward assertion.

    The durable part is a *detach* rule (created_by, created_at): derivation never links a
    detached name to another, so a full rederive gives the same split. The alias moves at
    once, the edges of the runs that used it are recomputed, and the events of both
    datasets' aliases (up to MAX_SELECTED_EVENTS, newest first) are re-derived so each
    dataset gets back exactly its own facets.
    """
    with transaction.atomic():
        # Checked under the locks detach_alias takes (alias, then its dataset), before the
        # rule is stored: checked before them, the second of two splits of a two-name
        # dataset at once (or a double-submitted form) found the other name still there,
        # waited, then detached nothing but stored a detach rule and an admin-log entry.
        old_dataset = lock_for_split(alias.pk)
        if old_dataset is None:
            raise ValueError("this alias is already the only name of its dataset")
        rule = _steward_rule(
            user,
            f"steward-split-{alias.pk}",
            AliasRuleAction.DETACH,
            (alias.namespace, alias.name),
            (alias.namespace, alias.name),
            priority=10,
            what=f"split: {alias.namespace}/{alias.name} left dataset #{old_dataset}.",
        )
        alias_ids = list(
            DatasetAlias.objects.filter(dataset_id=old_dataset).values_list("id", flat=True)
        )
        split_runs = detach_alias(alias.pk)
        recompute_edges(split_runs)
        recompute_job_edges(split_runs)
        log_curation(
            user, alias, f"split alias #{alias.pk} off dataset #{old_dataset}", rule=rule.slug
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT event_id FROM catalog_event_dataset WHERE alias_id = ANY(%s) "
            "ORDER BY event_id DESC LIMIT %s",
            [alias_ids, MAX_SELECTED_EVENTS],
        )
        event_ids = [row[0] for row in cursor.fetchall()]
    if len(event_ids) <= APPLY_INLINE_LIMIT:
        transaction.on_commit(partial(rederive_event_ids, event_ids))
    else:
        schedule_rederive(user, event_ids=event_ids, reason=f"split alias {rule.slug}")
    return rule


def _steward_rule(
    user: Any,
    slug: str,
    action: str,
    name: tuple[str, str],
    target: tuple[str, str],
    priority: int,
    what: str,
) -> AliasRule:
    """A rule asserted by a steward for exactly one name, saying who, when and what, under
    ``slug`` or, when a rule has it, the first free ``slug-N``. Two stewards (or one
    double-submitted form) asserting the same at once both get a rule: the second's insert
    waits for the first's and, refused, takes the next suffix (not a database error)."""
    base = slugify(slug)[:90]
    for suffix in itertools.count(1):  # as many as there are rules (one query each)
        candidate = base if suffix == 1 else f"{base}-{suffix}"
        if AliasRule.objects.filter(slug=candidate).exists():
            continue
        try:
            with transaction.atomic():  # a savepoint: a refused insert leaves the caller's
                return AliasRule.objects.create(
                    slug=candidate,
                    description=(
                        f"Steward {what} By {user.get_username()} on "
                        f"{timezone.now():%Y-%m-%d %H:%M} UTC."
                    ),
                    action=action,
                    namespace=name[0],
                    name_pattern=re.escape(name[1]),
                    target_namespace=target[0],
                    target_name=other_name_template(target[1]),
                    priority=priority,
                    enabled=True,
                    created_by=user,
                )
        except IntegrityError:
            if not AliasRule.objects.filter(slug=candidate).exists():
                raise  # not the slug: nothing a suffix mends
    raise AssertionError("unreachable")


def other_name_template(name: str) -> str:
    """A replacement template that yields ``name`` literally (backslashes escaped)."""
    return name.replace("\\", "\\\\")


__all__ = [
    "MAX_SELECTED_EVENTS",
    "RulePreview",
    "apply_rule",
    "log_curation",
    "merge_as_steward",
    "preview_rule",
    "split_alias",
]

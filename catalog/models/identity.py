"""Dataset identity and the rules that shape it (ADR 0020): datasets, the aliases that
name them (which never merge), the links that join aliases, and the steward's alias rules.

Alias rules are steward input, not derived: ``manage.py rederive`` keeps them and applies
them to the whole log.
"""

import logging
import re
from collections.abc import Iterable
from typing import Any

from django.contrib.postgres.indexes import GinIndex
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Count, F, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import MD5, Coalesce, Left

from catalog.models.fields import LABELLED, NamespacedQuerySet, covered_fk
from catalog.models.retirement import RetiredKind
from catalog.models.steward import StewardInput
from catalog.names import naming
from catalog.names.rules import RuleSet, alias_key, compile_pattern, compile_rule
from ingest.models import DigestIndexedText

logger = logging.getLogger(__name__)


# The aliases a dataset's list item and detail show, the first by name (ADR 0180).
ALIASES_SHOWN = 200


class DatasetQuerySet(NamespacedQuerySet):
    retired_kind = RetiredKind.DATASET

    def for_alias(self, namespace: str, name: str) -> "DatasetQuerySet":
        """The dataset any (namespace, name) it was ever called resolves to (rules applied)."""
        return self.filter(aliases__key_hash=stored_key(namespace, name))

    def for_table_name(self, table: str) -> "DatasetQuerySet":
        """An edge-API ``catalog.schema.table`` string, looked up by the same string."""
        return self.for_alias(*naming.edge_table(table))

    def under_path(self, path: str) -> "DatasetQuerySet":
        """Datasets whose browse path is ``path`` or below it (whole levels: ``db/s`` is
        not ``db/sales``), by the partial index on ``browse_path``."""
        path = path.strip("/")
        return self.exclude(browse_path="").filter(
            Q(browse_path=path) | Q(browse_path__startswith=f"{path}/")
        )

    def with_names(self, detail: bool = False) -> "DatasetQuerySet":
        """Datasets with their first ``ALIASES_SHOWN`` aliases prefetched
        (``prefetched_aliases``, name order) and how many they have (``alias_count``) and,
        for a detail page, each alias's rule and the schema fields (``prefetched_fields``).
        Aliases gather over years (a symlink per run): 50,000 were 4.2 MB of a list page's
        item (ADR 0180); /api/v1/datasets/{id}/aliases pages through them all."""
        aliases = DatasetAlias.objects.order_by("namespace", "name", "id")
        if detail:
            aliases = aliases.select_related("reason_rule")
        prefetches: list[Prefetch[Any, Any, Any]] = [
            Prefetch("aliases", queryset=aliases[:ALIASES_SHOWN], to_attr="prefetched_aliases")
        ]
        counted = (
            DatasetAlias.objects.filter(dataset=OuterRef("pk"))
            .order_by()
            .values("dataset")
            .annotate(n=Count("id"))
            .values("n")
        )
        named = self.annotate(alias_count=Coalesce(Subquery(counted), 0))
        if detail:
            # DatasetField (catalog.models.metadata) points here; reached through its relation.
            field_model: Any = self.model._meta.get_field("fields").related_model
            fields = field_model.objects.order_by("ordinal")
            prefetches.append(Prefetch("fields", queryset=fields, to_attr="prefetched_fields"))
        return named.prefetch_related(*prefetches)


class AliasQuerySet(models.QuerySet):
    def for_name(self, namespace: str, name: str) -> "AliasQuerySet":
        """The alias a (namespace, name) is stored as (rules applied)."""
        return self.filter(key_hash=stored_key(namespace, name))


class AliasRuleQuerySet(models.QuerySet["AliasRule"]):
    def rule_set(self) -> RuleSet:
        """The enabled rules, compiled, in application order (one query)."""
        return compiled_rules(self.filter(enabled=True))


def compiled_rules(rules: Iterable[Any]) -> RuleSet:
    """``rules`` (enabled, in application order: anything with an ``AliasRule``'s fields),
    compiled; a rule whose pattern does not compile is logged and skipped."""
    compiled = []
    for rule in rules:
        try:
            compiled.append(compile_rule(rule))
        except re.error as error:  # saved before patterns were checked: never run it
            logger.error("alias rule %r is skipped: %s", rule.slug, error)
    return RuleSet(compiled)


def stored_key(namespace: str, name: str) -> bytes:
    """The key a dataset name is stored under, with the rules in force now (one query).

    Every lookup of a dataset by a name it was called (the read API's filters and lookup,
    the admin search) goes through here, so it finds what derivation stored."""
    return alias_key(namespace, name, AliasRule.objects.rule_set())


# How Marquez orders its dataset list (its DatasetDao): by name. It matches an index below.
DATASETS_BY_NAME = (Left("name", 200), F("name"), F("id"))


class Dataset(models.Model):
    """A dataset with a stable id; every name it was ever called is a ``DatasetAlias``."""

    # The display name: the alias with the smallest (display_rank, namespace, name), which
    # prefers a pinned name, a TABLE symlink, a catalog over a storage location
    # (catalog.services.display_names). Also the merge survivor's key.
    namespace = DigestIndexedText()
    name = models.TextField()
    display_rank = models.SmallIntegerField(default=3, editable=False)
    facets = models.JSONField(default=dict, blank=True)
    facet_versions = models.JSONField(default=dict, blank=True, editable=False)
    description = models.TextField(blank=True, default="")
    # From the latest lifecycleStateChange facet (CREATE, ALTER, DROP, RENAME, OVERWRITE, ...).
    lifecycle_state = models.CharField(max_length=16, blank=True, default="")
    lifecycle_changed_at = models.DateTimeField(null=True, blank=True)
    is_dropped = models.BooleanField(default=False)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Tags and owners: the producer's (from the tags and ownership facets) and the
    # steward's (StewardLabel), each entry marked with its source and whether a steward
    # hid it (ADR 0083); a projection, rewritten by derivation and by the steward's edits.
    tags = models.JSONField(default=list, blank=True, editable=False)
    owners = models.JSONField(default=list, blank=True, editable=False)
    # The hierarchy facet's level names joined by "/" (``db/schema/table``), redacted, ""
    # without one: a projection, so the browse filter is an index range (ADR 0093).
    browse_path = models.TextField(blank=True, default="", editable=False)

    objects = DatasetQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset"
        ordering = ["namespace", "name", "id"]
        indexes = [
            # Datasets of a namespace (API filter); btree on md5: unbounded text, shared.
            models.Index(MD5("namespace"), name="catalog_dataset_ns_md5"),
            # Recently seen datasets (API "seen since"; the admin's list, newest first with
            # the never-seen last, or its reverse: ADR 0160).
            models.Index(
                F("last_seen").desc(nulls_last=True),
                F("id").desc(),
                name="catalog_dataset_seen_idx",
            ),
            # Marquez's dataset lists: a namespace's datasets by name (DATASETS_BY_NAME). The
            # name is cut to what a btree entry holds; a tie is sorted on the full name.
            models.Index(
                MD5("namespace"), Left("name", 200), F("id"), name="catalog_dataset_ns_name_idx"
            ),
            # ?tag= and ?owner= filters and search: jsonb containment (@>) of one entry.
            GinIndex(
                fields=["tags"], opclasses=["jsonb_path_ops"], name="catalog_dataset_tags_gin"
            ),
            GinIndex(
                fields=["owners"], opclasses=["jsonb_path_ops"], name="catalog_dataset_owners_gin"
            ),
            # ?path= (a browse path's prefix): LIKE 'db/schema/%' on the datasets that have one.
            models.Index(
                fields=["browse_path"],
                opclasses=["text_pattern_ops"],
                condition=~Q(browse_path=""),
                name="catalog_dataset_browse_idx",
            ),
            # Marquez's GET /tags and the admin's filters: the few labelled rows, newest
            # first, without reading the others.
            models.Index(fields=["id"], condition=LABELLED, name="catalog_dataset_labelled_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class AliasReason(models.TextChoices):
    EVENT = "event", "Named in an event"
    SYMLINK = "symlink", "symlinks facet"
    CATALOG = "catalog", "catalog facet (ADR 0093)"
    RENAME = "rename", "lifecycleStateChange RENAME previousIdentifier"
    RULE = "rule", "Alias rule"
    EDGE = "edge", "Edge API table name"


class DatasetAlias(models.Model):
    """One (namespace, name), normalised, and the dataset it currently belongs to."""

    namespace = models.TextField()
    name = models.TextField()
    # sha256(namespace + "\0" + name) of the normalised name: the lookup key.
    key_hash = models.BinaryField(max_length=32, editable=False)
    dataset = covered_fk(Dataset, null=True, on_delete=models.SET_NULL, related_name="aliases")
    # Why the alias exists: the first (by eventTime, then digest) reason that named it.
    reason = models.CharField(max_length=8, choices=AliasReason.choices)
    reason_event = models.ForeignKey(
        "ingest.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason_rule = models.ForeignKey(
        "catalog.AliasRule", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Free text: the facet path, the symlink's other name, the rule name.
    reason_detail = models.TextField(blank=True, default="")
    # Internal: [reason rank, eventTime ISO, digest hex] of the reason kept.
    reason_version = models.JSONField(default=list, blank=True, editable=False)
    # Named as a symlinks identifier of type TABLE (the logical name; preferred as title).
    is_table_name = models.BooleanField(default=False)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    objects = AliasQuerySet.as_manager()

    class Meta:
        db_table = "catalog_dataset_alias"
        ordering = ["namespace", "name"]
        verbose_name_plural = "dataset aliases"
        constraints = [
            # Lookup key (datasets/lookup) and the upsert target of derivation.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_alias_key_uniq"),
        ]
        indexes = [
            # Aliases of a dataset (dataset detail, merges repoint them), and in id order
            # (/datasets/{id}/aliases' pages, a range however many it has; ADR 0184).
            models.Index(fields=["dataset", "id"], name="catalog_alias_dataset_id_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class AliasLink(models.Model):
    """An equivalence between two aliases (undirected: stored with alias_a.id < alias_b.id)."""

    alias_a = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    alias_b = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=8, choices=AliasReason.choices)
    reason_event = models.ForeignKey(
        "ingest.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason_rule = models.ForeignKey(
        "catalog.AliasRule", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        db_table = "catalog_alias_link"
        constraints = [
            # One row per pair; upserted with ON CONFLICT DO NOTHING.
            models.UniqueConstraint(fields=["alias_a", "alias_b"], name="catalog_alias_link_uniq"),
        ]
        indexes = [
            # Links of an alias from its second side (the unique index covers alias_a).
            models.Index(fields=["alias_b"], name="catalog_alias_link_b_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.alias_a_id} ≡ {self.alias_b_id} ({self.reason})"


class AliasRuleAction(models.TextChoices):
    EQUATE = "equate", "Equate: both names are aliases of one dataset"
    REWRITE = "rewrite", "Rewrite: the name is replaced before it is stored"
    # A steward's split: symlinks, renames and equate rules never join the name to another.
    DETACH = "detach", "Detach: the name stays its own dataset"


class AliasRule(StewardInput):
    """A steward's rule: names matching (namespace, name_pattern) map to (target ...).

    ``name_pattern`` is a Python regular expression matched against the whole name (by
    RE2, in linear time: catalog/names/patterns.py);
    ``target_name`` is its replacement template (``\\1``, ``\\g<table>``). Not derived:
    stewards edit rules in the admin or load them with ``manage.py load_alias_rules``;
    a ``rederive`` applies changed rules to the whole log.
    """

    objects = AliasRuleQuerySet.as_manager()

    slug = models.SlugField(max_length=100)
    description = models.TextField(blank=True, default="")
    action = models.CharField(
        max_length=8, choices=AliasRuleAction.choices, default=AliasRuleAction.EQUATE
    )
    namespace = models.CharField(max_length=500)
    name_pattern = models.CharField(max_length=1000, default="(.*)")
    target_namespace = models.CharField(max_length=500)
    target_name = models.CharField(max_length=1000, default="\\1")
    priority = models.IntegerField(default=100)  # lower first; ties by slug
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "catalog_alias_rule"
        ordering = ["priority", "slug"]
        constraints = [
            # Rules are loaded from files by slug (upsert by slug).
            models.UniqueConstraint(fields=["slug"], name="catalog_alias_rule_slug_uniq"),
        ]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        """Refuse invalid patterns, and what the linear-time engine (RE2) cannot run, when
        a rule is saved (the admin's form calls this; ``load_alias_rules`` checks the same)."""
        try:
            compile_pattern(self.name_pattern)
        except re.error as error:
            raise ValidationError({"name_pattern": f"Refused: {error}"}) from error

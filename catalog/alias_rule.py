"""A steward's alias rule: names matching a pattern are equated, rewritten or detached.

Steward input, not derived: ``manage.py rederive`` keeps these rows and applies them to
the whole log. Defined apart from catalog/models.py (which re-exports it) to keep that
module under 600 lines.
"""

from django.core.exceptions import ValidationError
from django.db import models

from catalog.steward_input import StewardInput


class AliasRuleAction(models.TextChoices):
    EQUATE = "equate", "Equate: both names are aliases of one dataset"
    REWRITE = "rewrite", "Rewrite: the name is replaced before it is stored"
    # A steward's split: symlinks, renames and equate rules never join the name to another.
    DETACH = "detach", "Detach: the name stays its own dataset"


class AliasRule(StewardInput):
    """A steward's rule: names matching (namespace, name_pattern) map to (target ...).

    ``name_pattern`` is a Python regular expression matched against the whole name (by
    RE2, in linear time: catalog/rule_patterns.py);
    ``target_name`` is its replacement template (``\\1``, ``\\g<table>``). Not derived:
    stewards edit rules in the admin or load them with ``manage.py load_alias_rules``;
    a ``rederive`` applies changed rules to the whole log.
    """

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
        import re

        from catalog.rules import compile_pattern

        try:
            compile_pattern(self.name_pattern)
        except re.error as error:
            raise ValidationError({"name_pattern": f"Refused: {error}"}) from error

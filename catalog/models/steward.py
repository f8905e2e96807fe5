"""What every row a steward makes carries (who made it, when, and that rederive keeps
it), and the steward's pinned dataset titles (ADR 0020, catalog.services.display_names).
"""

from django.conf import settings
from django.db import models
from django.db.models.functions import Now


class StewardInput(models.Model):
    """Base of the steward's own rows (alias rules, title pins): not derived from events,
    so ``manage.py rederive`` keeps them (``catalog.services.derive.derived_tables``)."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(db_default=Now(), editable=False)
    kept_by_rederive = True

    class Meta:
        abstract = True


class DisplayNamePin(StewardInput):
    """A steward's choice of a dataset's title, by alias name (not derived: survives a
    rederive, like ``AliasRule``). See catalog.services.display_names."""

    namespace = models.TextField()
    name = models.TextField()
    key_hash = models.BinaryField(max_length=32, editable=False)

    class Meta:
        db_table = "catalog_display_name_pin"
        ordering = ["namespace", "name"]
        constraints = [
            # Looked up by the aliases' key hashes during derivation.
            models.UniqueConstraint(fields=["key_hash"], name="catalog_display_pin_key_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"

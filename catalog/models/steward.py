"""What every row a steward makes carries (who made it, when, and that rederive keeps
it), the steward's pinned dataset titles (ADR 0020, catalog.services.display_names) and
the steward's own tags and owners (ADR 0083, catalog.services.labels).
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


class LabelTarget(models.TextChoices):
    DATASET = "dataset", "Dataset"
    JOB = "job", "Job"


class LabelKind(models.TextChoices):
    TAG = "tag", "Tag"
    OWNER = "owner", "Owner"


class StewardLabel(StewardInput):
    """A steward's tag or owner of a dataset (by one of its aliases) or a job, or, with
    ``hides``, the steward hiding the producer's tag or owner of that key (kept, not shown).

    Keyed by the name's key hash, not by a row id, so it survives a rederive like the
    other steward input; derivation reads it when it projects tags and owners."""

    target = models.CharField(max_length=8, choices=LabelTarget.choices)
    namespace = models.TextField()
    name = models.TextField()
    key_hash = models.BinaryField(max_length=32, editable=False)
    kind = models.CharField(max_length=8, choices=LabelKind.choices)
    # A tag's column ("" for the whole dataset or job); owners have none.
    field = models.CharField(max_length=500, blank=True, default="")
    # A tag's key, or an owner's name.
    key = models.CharField(max_length=200)
    # A tag's value, or an owner's type (both optional).
    value = models.CharField(max_length=200, blank=True, default="")
    hides = models.BooleanField(default=False)

    class Meta:
        db_table = "catalog_steward_label"
        ordering = ["target", "namespace", "name", "kind", "field", "key"]
        constraints = [
            # One statement per (holder, tag or owner): adding it twice is one row. Also the
            # lookup of derivation and the admin, by the holder's key hash.
            models.UniqueConstraint(
                fields=["key_hash", "target", "kind", "field", "key", "value"],
                name="catalog_steward_label_uniq",
            ),
        ]

    def __str__(self) -> str:
        said = f"{self.key}={self.value}" if self.value else self.key
        where = f"{self.namespace}/{self.name}" + (f".{self.field}" if self.field else "")
        return f"{'hide ' if self.hides else ''}{self.kind} {said} on {where}"


# A Marquez tag name is ``key`` or ``key:value`` (StewardLabel's key and value, 200 each).
TAG_NAME_LENGTH = 401
TAG_DESCRIPTION_LENGTH = 2000


class TagDescription(StewardInput):
    """A steward's description of a tag, by the tag's name as Marquez names it (``key``, or
    ``key:value``): Marquez's ``PUT /tags/{tag}`` and the admin write it, ``GET /tags``
    lists it (catalog.services.labels.describe_tag). A tag may be described before any
    dataset or job carries it, as in Marquez. Not derived: a rederive keeps it."""

    name = models.CharField(max_length=TAG_NAME_LENGTH)
    description = models.TextField(blank=True, default="", max_length=TAG_DESCRIPTION_LENGTH)
    updated_at = models.DateTimeField(db_default=Now(), editable=False)

    class Meta:
        db_table = "catalog_tag_description"
        ordering = ["name"]
        constraints = [
            # One description per tag: a second PUT of the name replaces it (an upsert).
            models.UniqueConstraint(fields=["name"], name="catalog_tag_description_name_uniq"),
        ]

    def __str__(self) -> str:
        return self.name

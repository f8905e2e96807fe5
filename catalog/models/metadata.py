"""What the catalog knows about datasets beyond the graph: their schema fields, which
events named each alias, and the generic metadata records (``/api/v1/metadata``).
"""

from datetime import datetime

from django.contrib.postgres.indexes import GinIndex, HashIndex
from django.db import models
from django.db.models.functions import MD5

from catalog.models.fields import covered_fk
from catalog.models.identity import Dataset, DatasetAlias
from ingest.models import DigestIndexedText
from ingest.querysets import filter_given


class MetadataRecordQuerySet(models.QuerySet):
    def search(
        self,
        resource: str | None = None,
        subject: str | None = None,
        action: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        values: dict[str, str] | None = None,
    ) -> "MetadataRecordQuerySet":
        queryset = filter_given(
            self,
            resource=resource,
            subject=subject,
            action=action,
            timestamp__gte=since,
            timestamp__lt=until,
        )
        if values:
            queryset = queryset.filter(additional_values__contains=values)
        return queryset


class DatasetField(models.Model):
    """A field of a dataset's current schema (nested fields flattened as a.b.c)."""

    dataset = covered_fk(Dataset, on_delete=models.CASCADE, related_name="fields")
    ordinal = models.IntegerField()
    name = models.TextField()
    type = models.TextField(blank=True, default="")
    description = models.TextField(blank=True, default="")

    class Meta:
        db_table = "catalog_dataset_field"
        ordering = ["dataset", "ordinal"]
        constraints = [
            # Fields of a dataset in schema order; replaced as a whole when the schema changes.
            models.UniqueConstraint(
                fields=["dataset", "ordinal"], name="catalog_dataset_field_uniq"
            ),
        ]
        indexes = [
            # Search by column name (equality; hash because names are unbounded).
            HashIndex(fields=["name"], name="catalog_field_name_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.type}"


class EventDatasetRole(models.TextChoices):
    INPUT = "input", "Input"
    OUTPUT = "output", "Output"
    DATASET = "dataset", "DatasetEvent subject"
    SYMLINK = "symlink", "Symlink"


class EventDataset(models.Model):
    """Which events named which alias: "the events of a dataset" (API /events?dataset=)."""

    alias = covered_fk(DatasetAlias, on_delete=models.CASCADE, related_name="+")
    event = covered_fk("ingest.Event", on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=8, choices=EventDatasetRole.choices)

    class Meta:
        db_table = "catalog_event_dataset"
        constraints = [
            # One row per (alias, event, role); also serves "events of an alias" by prefix.
            models.UniqueConstraint(
                fields=["alias", "event", "role"], name="catalog_event_dataset_uniq"
            ),
        ]
        indexes = [
            # Rederive --since deletes the links of re-derived events.
            models.Index(fields=["event"], name="catalog_event_ds_event_idx"),
        ]

    def __str__(self) -> str:
        return f"event {self.event_id} {self.role} alias {self.alias_id}"


class MetadataRecord(models.Model):
    """A generic metadata record (``/api/v1/metadata``), indexed for search."""

    event = models.OneToOneField("ingest.Event", on_delete=models.CASCADE, related_name="+")
    resource = DigestIndexedText()
    subject = DigestIndexedText()
    action = DigestIndexedText()
    timestamp = models.DateTimeField()
    additional_values = models.JSONField(default=dict, blank=True)

    objects = MetadataRecordQuerySet.as_manager()

    class Meta:
        db_table = "catalog_metadata_record"
        ordering = ["-timestamp", "-id"]
        indexes = [
            # Equality filters (?resource=, ?subject=, ?action=): btree on md5 (ADR 0025).
            models.Index(MD5("resource"), name="catalog_meta_resource_md5"),
            models.Index(MD5("subject"), name="catalog_meta_subject_md5"),
            models.Index(MD5("action"), name="catalog_meta_action_md5"),
            # Time ranges (?since=&until=) and the default newest-first order.
            models.Index(fields=["-timestamp", "-id"], name="catalog_meta_time_idx"),
            # ?key=value filters: additional_values @> {"key": "value"}.
            GinIndex(
                fields=["additional_values"],
                name="catalog_meta_values_gin",
                opclasses=["jsonb_path_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"{self.subject} {self.action} {self.resource}"

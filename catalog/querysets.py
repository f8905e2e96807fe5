"""Read-side query helpers for the catalog (attached to the models with ``.as_manager()``)."""

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import OuterRef, Q, Subquery

from catalog import naming

if TYPE_CHECKING:
    from catalog.models import Dataset


class JobQuerySet(models.QuerySet):
    def for_name(self, namespace: str, name: str) -> "JobQuerySet":
        return self.filter(key_hash=naming.key_hash(namespace, name))

    def with_latest_run(self) -> "JobQuerySet":
        """Annotate ``latest_run_id`` and ``latest_run_state`` (newest started run)."""
        from catalog.models import Run

        latest = Run.objects.filter(job=OuterRef("pk")).order_by("-started_at", "-id")
        return self.annotate(
            latest_run_id=Subquery(latest.values("id")[:1]),
            latest_run_state=Subquery(latest.values("state")[:1]),
        )

    def real(self) -> "JobQuerySet":
        """Jobs with events of their own (not only named as someone's parent)."""
        return self.filter(is_placeholder=False)


class RunQuerySet(models.QuerySet):
    def for_run_id(self, run_id: str, job_namespace: str = "", job_name: str = "") -> Any:
        return self.filter(run_uuid=naming.run_uuid(run_id, job_namespace, job_name))

    def running(self) -> "RunQuerySet":
        from catalog.models import TERMINAL_STATES

        return self.exclude(state__in=TERMINAL_STATES)


class DatasetQuerySet(models.QuerySet):
    def for_alias(self, namespace: str, name: str) -> "DatasetQuerySet":
        """The dataset any (namespace, name) it was ever called resolves to (rules applied)."""
        from catalog.rules import active_rules

        namespace, name = active_rules().rewrite(*naming.normalise(namespace, name))
        return self.filter(aliases__key_hash=naming.key_hash(namespace, name))

    def for_table_name(self, table: str) -> "DatasetQuerySet":
        """An edge-API ``catalog.schema.table`` string, looked up by the same string."""
        return self.for_alias(*naming.edge_table(table))

    def live(self) -> "DatasetQuerySet":
        return self.filter(is_dropped=False)


class AliasQuerySet(models.QuerySet):
    def for_name(self, namespace: str, name: str) -> "AliasQuerySet":
        return self.filter(key_hash=naming.key_hash(*naming.normalise(namespace, name)))


class LineageEdgeQuerySet(models.QuerySet):
    def as_of(self, moment: datetime) -> "LineageEdgeQuerySet":
        """Edges that existed at ``moment`` (some run had produced them by then)."""
        return self.filter(first_seen__lte=moment)

    def touching(self, dataset: "Dataset | int") -> "LineageEdgeQuerySet":
        return self.filter(Q(source=dataset) | Q(target=dataset))

    def current(self, since: datetime) -> "LineageEdgeQuerySet":
        """Edges still produced since ``since`` (older ones are history)."""
        return self.filter(last_seen__gte=since)


class ColumnLineageEdgeQuerySet(models.QuerySet):
    def touching(self, dataset: "Dataset | int") -> "ColumnLineageEdgeQuerySet":
        return self.filter(Q(source=dataset) | Q(target=dataset))


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
        queryset = self
        if resource is not None:
            queryset = queryset.filter(resource=resource)
        if subject is not None:
            queryset = queryset.filter(subject=subject)
        if action is not None:
            queryset = queryset.filter(action=action)
        if since is not None:
            queryset = queryset.filter(timestamp__gte=since)
        if until is not None:
            queryset = queryset.filter(timestamp__lt=until)
        if values:
            queryset = queryset.filter(additional_values__contains=values)
        return queryset

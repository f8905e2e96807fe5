"""Read-side query helpers for the catalog (attached to the models with ``.as_manager()``)."""

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Count, OuterRef, Prefetch, Subquery

from catalog.names import naming
from catalog.names.rules import alias_key
from ingest.models import Event
from ingest.querysets import filter_given

if TYPE_CHECKING:
    pass


# A job's, run's or dataset's facets can be hundreds of kilobytes (a Spark plan, a wide
# schema) and their versions grow with them; a list shows none of them, so it never reads
# them (the API's pinned query counts prove no row loads them afterwards).
FACET_FIELDS = ("facets", "facet_versions")


class NamespacedQuerySet(models.QuerySet):
    def for_list(self) -> Any:
        """Without the facet columns: what a list page reads."""
        return self.defer(*FACET_FIELDS)

    def namespace_counts(self) -> dict[str, int]:
        """Rows per namespace (one GROUP BY over the namespace column, ADR 0030)."""
        rows = self.order_by().values("namespace").annotate(n=Count("id"))
        return {row["namespace"]: row["n"] for row in rows}


class JobQuerySet(NamespacedQuerySet):
    def for_name(self, namespace: str, name: str) -> "JobQuerySet":
        return self.filter(key_hash=naming.key_hash(namespace, name))

    def with_latest_run(self) -> "JobQuerySet":
        """Annotate the newest started run's ``latest_run_uuid``, ``_state``, ``_started``
        (three correlated subqueries per row, each on catalog_run_job_started_idx)."""
        from catalog.models import Run  # a real circle: the models' managers are these

        latest = Run.objects.filter(job=OuterRef("pk")).order_by("-started_at", "-id")
        return self.annotate(
            latest_run_uuid=Subquery(latest.values("run_uuid")[:1]),
            latest_run_state=Subquery(latest.values("state")[:1]),
            latest_run_started=Subquery(latest.values("started_at")[:1]),
        )

    def with_latest_run_state(self) -> "JobQuerySet":
        """Annotate ``latest_run_state`` unless it is already there (the state filter)."""
        if "latest_run_state" in self.query.annotations:
            return self
        from catalog.models import Run  # a real circle: the models' managers are these

        latest = Run.objects.filter(job=OuterRef("pk")).order_by("-started_at", "-id")
        return self.annotate(latest_run_state=Subquery(latest.values("state")[:1]))


class RunQuerySet(models.QuerySet):
    def for_list(self) -> "RunQuerySet":
        """Runs with their job and parent runId, without any facet column or merge version
        (``with_parent_uuid``, what a list page reads)."""
        job_facets = [f"job__{name}" for name in FACET_FIELDS]
        return self.with_parent_uuid().defer(
            *FACET_FIELDS, *job_facets, "state_version", "job_version"
        )

    def for_run_id(self, run_id: str, job_namespace: str = "", job_name: str = "") -> Any:
        return self.filter(run_uuid=naming.run_uuid(run_id, job_namespace, job_name))

    def named(self, run_id: str, jobs_limit: int = 20) -> Any:
        """Runs the runId a producer sent names, in any job: a UUID is the key itself; other
        text is mapped per job (uuid5 over job and runId), the jobs read from the events that
        carried it (ingest_event_run_hash), at most ``jobs_limit`` of them."""
        try:
            return self.filter(run_uuid=uuid.UUID(run_id))
        except ValueError:
            pass
        jobs = (
            Event.objects.filter(run_id=run_id, job_name__isnull=False)
            .order_by()
            .values_list("job_namespace", "job_name")
            .distinct()[:jobs_limit]
        )
        # Derivation keys a job by its name without credentials (naming.without_credentials).
        clean = naming.without_credentials
        uuids = [naming.run_uuid(run_id, clean(ns or ""), clean(name or "")) for ns, name in jobs]
        return self.filter(run_uuid__in=uuids)

    def with_parent_uuid(self) -> "RunQuerySet":
        """Runs with their job and ``parent_uuid`` (the parent run's runId, one subquery)."""
        from catalog.models import Run  # a real circle: the models' managers are these

        parent = Run.objects.filter(pk=OuterRef("parent_run_id")).values("run_uuid")[:1]
        return self.select_related("job").annotate(parent_uuid=Subquery(parent))


class DatasetQuerySet(NamespacedQuerySet):
    def for_alias(self, namespace: str, name: str) -> "DatasetQuerySet":
        """The dataset any (namespace, name) it was ever called resolves to (rules applied)."""
        return self.filter(aliases__key_hash=alias_key(namespace, name))

    def for_table_name(self, table: str) -> "DatasetQuerySet":
        """An edge-API ``catalog.schema.table`` string, looked up by the same string."""
        return self.for_alias(*naming.edge_table(table))

    def with_names(self, detail: bool = False) -> "DatasetQuerySet":
        """Datasets with their aliases prefetched (``prefetched_aliases``, name order) and,
        for a detail page, each alias's rule and the schema fields (``prefetched_fields``)."""
        # A real circle: catalog.models builds its managers from this module.
        from catalog.models import DatasetAlias, DatasetField

        aliases = DatasetAlias.objects.order_by("namespace", "name", "id")
        if detail:
            aliases = aliases.select_related("reason_rule")
        prefetches: list[Prefetch[Any, Any, Any]] = [
            Prefetch("aliases", queryset=aliases, to_attr="prefetched_aliases")
        ]
        if detail:
            fields = DatasetField.objects.order_by("ordinal")
            prefetches.append(Prefetch("fields", queryset=fields, to_attr="prefetched_fields"))
        return self.prefetch_related(*prefetches)


class AliasQuerySet(models.QuerySet):
    def for_name(self, namespace: str, name: str) -> "AliasQuerySet":
        """The alias a (namespace, name) is stored as (rules applied)."""
        return self.filter(key_hash=alias_key(namespace, name))


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

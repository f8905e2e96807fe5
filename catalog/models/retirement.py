"""Retirement (ADR 0078): a steward's or a program's word that a dataset, a job or a whole
namespace is gone. Steward input, not derived: ``manage.py rederive`` keeps it.

A row is one retirement, active until it is restored (``restored_at``): by a steward, or
by an event received after it that names the object (a revival, ``revived_by_event``).
Rows are never deleted, so the table is also the history of every retire and restore.
Retiring a namespace writes one row for the namespace and one per dataset and job in it
(``part_of``), in one statement; reads hide an object while it has an active row.
"""

from typing import Any

from django.db import models
from django.db.models import Exists, OuterRef, Q, Subquery
from django.db.models.functions import MD5, Now

# The transaction-scoped advisory lock between retiring (exclusive) and a derivation batch's
# revival (shared): any bigint the house does not use elsewhere (the others are
# hashtextextended keys and RUN_UUID_LOCK).
RETIREMENT_LOCK = 0x52455449524537  # "RETIRE7"


class RetiredKind(models.IntegerChoices):
    DATASET = 1, "dataset"
    JOB = 2, "job"
    NAMESPACE = 3, "namespace"


class RetirementQuerySet(models.QuerySet["Retirement"]):
    def active(self) -> "RetirementQuerySet":
        return self.filter(restored_at__isnull=True)


class Retirement(models.Model):
    kind = models.SmallIntegerField(choices=RetiredKind.choices)
    # The dataset's or job's id (kept across a rederive, ADR 0077); None for a namespace.
    object_id = models.BigIntegerField(null=True, blank=True)
    # The namespace retired, or the object's namespace when it was retired.
    namespace = models.TextField()
    # The namespace retirement this object's row was written by (restored with it).
    part_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    retired_at = models.DateTimeField()
    # Who: a user name, or "token:<name>" for a program (Django's admin log, which needs a
    # user, holds the sessions' acts too: catalog.services.retirement).
    retired_by = models.CharField(max_length=200)
    reason = models.TextField(blank=True, default="")
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.CharField(max_length=200, blank=True, default="")
    # The event, received after the retirement, that named the object and so revived it.
    revived_by_event = models.ForeignKey(
        "ingest.Event", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = RetirementQuerySet.as_manager()
    kept_by_rederive = True  # steward input, like alias rules

    class Meta:
        db_table = "catalog_retirement"
        ordering = ["-id"]
        constraints = [
            # One active retirement per object: retire is idempotent (ON CONFLICT DO
            # NOTHING), and every read's "is it retired" probe is this index.
            models.UniqueConstraint(
                fields=["kind", "object_id"],
                condition=Q(restored_at__isnull=True, object_id__isnull=False),
                name="catalog_retirement_active_uniq",
            ),
            # One active retirement per namespace (md5: the name is unbounded text).
            models.UniqueConstraint(
                MD5("namespace"),
                condition=Q(restored_at__isnull=True, kind=3),
                name="catalog_retirement_ns_active_uniq",
            ),
        ]
        indexes = [
            # Restoring a namespace restores the rows its retirement wrote.
            models.Index(
                fields=["part_of"],
                condition=Q(part_of__isnull=False, restored_at__isnull=True),
                name="catalog_retirement_part_idx",
            ),
        ]

    def __str__(self) -> str:
        what = RetiredKind(self.kind).label
        return f"{what} {self.namespace if self.object_id is None else self.object_id} retired"


def retired(kind: RetiredKind) -> Exists:
    """An ``Exists`` on the active retirement of the row (``pk``) a queryset reads."""
    return Exists(Retirement.objects.active().filter(kind=kind, object_id=OuterRef("pk")))


def retired_sql(kind: RetiredKind, column: str) -> str:
    """SQL: ``column`` (a dataset or job id) has an active retirement (an index probe)."""
    return (
        "EXISTS (SELECT 1 FROM catalog_retirement rt WHERE rt.kind = "
        f"{int(kind)} AND rt.object_id = {column} AND rt.restored_at IS NULL)"
    )


def any_retired_sql() -> str:
    """SQL: the store holds an active retirement of anything (``Retirement.objects.active()``
    is not empty): one of the two facts a lineage graph is planned by (ADR 0104)."""
    return "EXISTS (SELECT 1 FROM catalog_retirement rt WHERE rt.restored_at IS NULL)"


class RetirableQuerySet(models.QuerySet):
    """What datasets and jobs share: hiding the retired, and listing them (``?retired=``)."""

    retired_kind: RetiredKind

    def current(self) -> Any:
        """Without what is retired: every read but a staff member's detail by id."""
        return self.filter(~retired(self.retired_kind))

    def retired(self) -> Any:
        return self.filter(retired(self.retired_kind))

    def with_retirement(self) -> Any:
        """Annotate the active retirement's ``retired_at``, ``retired_by`` and
        ``retired_reason`` (None when not retired): subqueries of the same query."""
        active = Retirement.objects.active().filter(
            kind=self.retired_kind, object_id=OuterRef("pk")
        )
        return self.annotate(
            retired_at=Subquery(active.values("retired_at")[:1]),
            retired_by=Subquery(active.values("retired_by")[:1]),
            retired_reason=Subquery(active.values("reason")[:1]),
        )


class NamespacePurge(models.Model):
    """The audit record of ``manage.py purge_namespace`` (ADR 0078): who, when, and how many
    rows each table lost. The namespace is kept only as its sha256: an erasure leaves no
    name behind, yet a request about a name can be checked against the record."""

    namespace_sha256 = models.CharField(max_length=64)
    purged_by = models.CharField(max_length=200)
    purged_at = models.DateTimeField(db_default=Now(), editable=False)
    rows = models.JSONField(default=dict)  # table → rows deleted

    kept_by_rederive = True  # a record of what was done, not derived

    class Meta:
        db_table = "catalog_namespace_purge"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"purge of {self.namespace_sha256[:12]}… by {self.purged_by}"

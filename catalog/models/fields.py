"""Field and queryset helpers shared by the catalog's model modules."""

from typing import Any

from django.db import models
from django.db.models import Count, Q

from catalog.models.retirement import RetirableQuerySet

# A job's, run's or dataset's facets can be hundreds of kilobytes (a Spark plan, a wide
# schema) and their versions grow with them; a list shows none of them, so it never reads
# them (the API's pinned query counts prove no row loads them afterwards).
FACET_FIELDS = ("facets", "facet_versions")


def covered_fk(to: Any, **options: Any) -> models.ForeignKey:
    """A foreign key without its own index: a unique constraint or an index that starts
    with the column already serves it, and each index costs every write (ADR 0025)."""
    return models.ForeignKey(to, db_index=False, **options)


# A row with a tag or an owner (ADR 0083); the condition of the partial indexes of both.
LABELLED = ~Q(tags=[]) | ~Q(owners=[])


class NamespacedQuerySet(RetirableQuerySet):
    def for_list(self) -> Any:
        """Without the facet columns: what a list page reads."""
        return self.defer(*FACET_FIELDS)

    def namespace_counts(self) -> dict[str, int]:
        """Rows per namespace: one GROUP BY of the whole table. No request reads it (the
        namespace lists read the per-namespace summary, ADR 0121); it is the recount the
        summary is tested against."""
        rows = self.order_by().values("namespace").annotate(n=Count("id"))
        return {row["namespace"]: row["n"] for row in rows}

    def tagged(self, tag: str) -> Any:
        """Rows with a visible tag (theirs or a column's) whose key is ``tag``, or, for
        ``key:value``, whose key and value are those (Marquez names tags so). One jsonb
        containment per reading, served by the GIN index on ``tags`` (ADR 0083)."""
        readings = Q(tags__contains=[{"key": tag, "hidden": False}])
        key, colon, value = tag.partition(":")
        if colon:
            readings |= Q(tags__contains=[{"key": key, "value": value, "hidden": False}])
        return self.filter(readings)

    def labelled(self) -> Any:
        """Rows with a tag or an owner (the partial index ``catalog_<model>_labelled_idx``)."""
        return self.filter(LABELLED)

    def owned_by(self, owner: str) -> Any:
        """Rows with a visible owner of that name (GIN index on ``owners``)."""
        return self.filter(owners__contains=[{"name": owner, "hidden": False}])

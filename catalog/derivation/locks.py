"""The one way derivation takes row locks: ``SELECT ... FOR UPDATE`` in primary-key order.

Every derivation batch locks jobs, then runs, then aliases, then datasets, each in id
order, so two workers touching the same rows wait for each other instead of deadlocking.
"""

from django.db.models import QuerySet


def locked(queryset: QuerySet) -> QuerySet:
    return queryset.order_by("pk").select_for_update()

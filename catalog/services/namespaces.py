"""Rebuild the per-namespace summary from the tables (ADR 0121).

PostgreSQL's triggers keep ``catalog_namespace`` right on every write
(catalog.models.namespaces); this recounts it whole, for a store whose summary was never
filled or is doubted (``manage.py refresh_namespaces``; migration 0035 runs the same
function once). One INSERT ... SELECT over both tables, under a lock that holds every
trigger's change until it is done: proportional to the tables, so never on a request.
"""

from django.db import connection, transaction


def refresh_namespaces() -> int:
    """Recount the summary from the job, dataset and retirement tables; its rows after."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT catalog_namespace_refresh()")
        cursor.execute("SELECT count(*) FROM catalog_namespace")
        return int(cursor.fetchone()[0])

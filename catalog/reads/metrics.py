"""Catalog gauges for ``/metrics``, read from the database at scrape time (ADR 0011).

Registered by ``CatalogConfig.ready`` into ingest's scrape-time registry, so ingest does
not import the catalog. Each query walks a partial index and is capped.
"""

import logging
from collections.abc import Iterable

from django.db import DatabaseError, connection, transaction
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

SHARED_CAP = 100_000
# catalog_run_shared_idx: the partial index of runs whose runId another job also sent.
_SHARED = "SELECT count(*) FROM (SELECT 1 FROM catalog_run WHERE shares_run_id LIMIT %s) AS s"


class CatalogCollector(Collector):
    def collect(self) -> Iterable[GaugeMetricFamily]:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL statement_timeout = 2000")
                cursor.execute(_SHARED, [SHARED_CAP])
                shared = cursor.fetchone()[0]
        except DatabaseError as error:
            # lineage_metrics_database_up (ingest's collector) already tells the outage.
            logger.warning("catalog_metrics_unavailable", extra={"error": type(error).__name__})
            return
        yield GaugeMetricFamily(
            "lineage_runs_sharing_run_id",
            "Runs whose runId another job's events also carry: each job keeps its own run "
            f"(ADR 0028); a producer to fix (capped at {SHARED_CAP}).",
            value=shared,
        )

from django.apps import AppConfig
from django.db.backends.signals import connection_created


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest (raw event log)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import db_timestamps, lookups  # noqa: F401 (lookups registers ``__any``)

        connection_created.connect(db_timestamps.install, dispatch_uid="core.db_timestamps")
        from ingest.kafka.gauges import KafkaCollector
        from ingest.metrics import register_database_collector

        register_database_collector(KafkaCollector())

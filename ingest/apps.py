from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingest (raw event log)"
    default_auto_field = "django.db.models.BigAutoField"

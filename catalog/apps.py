from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog.metrics import CatalogCollector
        from ingest.metrics import register_database_collector

        register_database_collector(CatalogCollector())

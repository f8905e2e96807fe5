from django.apps import AppConfig


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported once the app registry is ready (Django's rule for ready()): these modules
        # read models and the admin registry.
        from django.db.models.signals import post_migrate

        from catalog.permissions import apply_registry_permissions
        from catalog.reads.metrics import CatalogCollector
        from ingest.metrics import register_database_collector

        register_database_collector(CatalogCollector())
        # The steward and reader groups follow the admin's registry (catalog/permissions.py).
        post_migrate.connect(
            apply_registry_permissions, sender=self, dispatch_uid="catalog-steward-permissions"
        )

"""``manage.py refresh_namespaces``: rebuild the per-namespace summary the namespace reads
read from the job, dataset and retirement tables (ADR 0121). The triggers keep it right;
this is the repair, and what migration 0035 ran once to fill it."""

from typing import Any

from django.core.management.base import BaseCommand

from catalog.services.namespaces import refresh_namespaces


class Command(BaseCommand):
    help = "Recount catalog_namespace (per namespace: current jobs, datasets, first/last seen)."

    def handle(self, *args: Any, **options: Any) -> None:
        rows = refresh_namespaces()
        self.stdout.write(f"refresh_namespaces: {rows} summary row(s)")

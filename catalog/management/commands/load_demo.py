"""``manage.py load_demo [--force] [--base-url URL]``: load real producers' events (Airflow,
dbt-ol, Spark on Hive) into an empty catalog and say where to look (`make demo`)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from catalog.services.demo import CatalogNotEmpty, DemoResult, load_demo
from core.command_output import RedactedOutput


class Command(RedactedOutput, BaseCommand):
    help = (
        "Load the demo: real Airflow, dbt-ol and Spark/Hive events shipped with the service, "
        "derived at once. Loading it twice stores nothing twice. Refuses when the event log "
        "holds other events, unless --force."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--force", action="store_true", help="Load even though the log holds other events."
        )
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help=(
                "Where the service answers, for the links printed (default: make run's "
                "default address; `make demo` passes its HOST and PORT)."
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = load_demo(force=options["force"])
        except CatalogNotEmpty:
            raise CommandError(
                "The event log already holds events that are not the demo's; the demo would "
                "mix its names with them. Load it into an empty catalog, or pass --force "
                "(`make demo ARGS=--force`)."
            ) from None
        self.stdout.write(
            f"load_demo: {result.events} events (Airflow 2.10.5, dbt-ol, Spark 1.23.0 on Hive), "
            f"{result.stored} new, {result.events - result.stored} already stored; "
            f"derived {result.derived} now, failed {result.failed}."
        )
        for label, url in _links(options["base_url"].rstrip("/"), result):
            self.stdout.write(f"  {label:<15} {url}")


def _links(base: str, result: DemoResult) -> list[tuple[str, str]]:
    links = [("Dashboard:", f"{base}{reverse('admin:index')}")]
    if result.dag_id is not None:
        links.append(
            ("A DAG:", f"{base}{reverse('admin:catalog_job_change', args=[result.dag_id])}")
        )
    if result.column_lineage_dataset_id is not None:
        explorer = reverse("lineage-explorer")
        node = result.column_lineage_dataset_id
        links.append(("Column lineage:", f"{base}{explorer}?node=dataset:{node}&lineage_columns=1"))
    if result.aliased_dataset_id is not None:
        page = reverse("admin:catalog_dataset_change", args=[result.aliased_dataset_id])
        links.append(("An alias:", f"{base}{page}"))
    if len(links) < 4:  # a running worker derived some first and holds them for a moment
        links.append(("Not derived yet:", "run `make demo` (or load_demo) again in a moment"))
    return links

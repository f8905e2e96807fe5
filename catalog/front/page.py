"""The front page at ``/``: what is running, its health, where to go, how to send lineage.

It lives in ``catalog`` because its figures are the catalog's headline figures
(catalog/reads/stats.py, over ingest's event log) and the worker it reports runs catalog tasks;
``api`` is the programs' contract (DRF, the OpenAPI schema) and ``config`` holds no logic.
The links are resolved by URL name, so nothing here imports ``api`` (ADR 0063).

Counts are shown to whoever may read the catalog: a staff session, or anyone when reads
are anonymous (``LINEAGE_MARQUEZ_ALLOW_ANONYMOUS_READS``). Everyone else sees what is
running and the links and snippets, but no count and no name.
"""

import os
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

from catalog.front import worker_seen
from catalog.front.snippets import SAMPLE_EVENT, snippets
from catalog.reads import stats

# A worker is "running" when it ran a task this recently (the scheduler sweeps every 5 s).
WORKER_FRESH_SECONDS = 60


@dataclass(frozen=True)
class Health:
    events: int
    jobs: int
    datasets: int
    runs: int
    pending: int
    failed: int
    capped_at: int
    lag_seconds: float | None
    worker_last_seen: datetime | None
    worker_state: str  # "running", "stale", "never seen", "unknown"


def may_see_figures(request: HttpRequest) -> bool:
    """Exactly whoever /api/v1/stats answers (its figures are these): a staff session
    holding its view permission, by the one rule both use (catalog.reads.stats.may_read).
    Anonymous visitors never: /api/v1/stats has no anonymous reads."""
    return stats.may_read(request.user)


def health(now: datetime) -> Health:
    """Two bounded queries (catalog/reads/stats.py) and one Redis GET."""
    sizes = stats.table_sizes()
    backlog = stats.derivation_backlog()
    seen = worker_seen.last_seen()
    if isinstance(seen, worker_seen.Unknown):
        state, seen = "unknown", None
    elif seen is None:
        state = "never seen"
    else:
        state = "running" if (now - seen).total_seconds() <= WORKER_FRESH_SECONDS else "stale"
    return Health(
        events=sizes["events"],
        jobs=sizes["jobs"],
        datasets=sizes["datasets"],
        runs=sizes["runs"],
        pending=backlog.pending,
        failed=backlog.failed,
        capped_at=backlog.cap,
        lag_seconds=backlog.lag_seconds(now),
        worker_last_seen=seen,
        worker_state=state,
    )


def _version() -> str:
    try:
        return version("lineage-catalog")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


@require_safe
def front_page(request: HttpRequest) -> HttpResponse:
    base_url = request.build_absolute_uri("/").rstrip("/")
    marquez = settings.MARQUEZ_API["ENABLED"]
    links = [
        ("Admin", reverse("admin:index"), "stewards: datasets, jobs, runs, alias rules"),
        ("Lineage explorer", reverse("lineage-explorer"), "any node's upstream and downstream"),
        ("API docs", reverse("api-docs"), "the read API (Swagger UI); schema at /api/schema/"),
    ]
    if marquez:
        links.append(
            ("Marquez-compatible API", reverse("marquez-root"), "for Marquez's web UI and client")
        )
    links.append(("Readiness", reverse("readyz"), "database, migrations, broker"))
    figures = may_see_figures(request)
    now = timezone.now()
    context = {
        "version": _version(),
        "environment": os.environ.get("DJANGO_SETTINGS_MODULE", "").rsplit(".", 1)[-1],
        "debug": settings.DEBUG,
        "base_url": base_url,
        "ingest_url": base_url + reverse("ingest-lineage"),
        "batch_url": base_url + reverse("ingest-lineage-batch"),
        "links": links,
        "snippets": snippets(base_url),
        "sample_event": SAMPLE_EVENT,
        "health": health(now) if figures else None,
        "now": now,
        "logged_in": request.user.is_authenticated,
        "login_url": reverse("admin:login") + "?next=/",
    }
    return render(request, "catalog/front_page.html", context)

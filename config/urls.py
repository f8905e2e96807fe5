"""URL map: /api/v1/ for programs (ingest and read side), /admin/ for stewards, probes."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from catalog.admin.picture import explorer_view
from catalog.front.favicon import favicon
from catalog.front.page import front_page
from ingest.health import healthz, readyz
from ingest.metrics import metrics_view

urlpatterns = [
    # What is running, its health and how to send lineage, for people (catalog/front/page.py).
    path("", front_page, name="front-page"),
    # The read API first: /api/v1/metadata is both a read (GET, api) and an ingest (POST)
    # endpoint, and the read view hands every other method to ingest's view.
    path("api/v1/", include("api.urls")),
    path("api/v1/", include("ingest.urls")),
    # Marquez's read API for its web UI and Python client (docs/marquez.md).
    path("marquez/api/v1/", include("api.marquez.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # Before the admin's own URLs, which would take it for an app label.
    path("admin/lineage/", admin.site.admin_view(explorer_view), name="lineage-explorer"),
    path("admin/", admin.site.urls),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
]

# Programs get problem documents for unknown URLs too, not HTML.
handler400 = "api.marquez.errors.bad_request"  # and Marquez's shape under its mount
handler404 = "core.problems.not_found"
handler500 = "core.problems.server_error"

"""Read-side routes: the URL space of docs/api.md (no trailing slashes, like ingest)."""

from django.urls import path
from rest_framework.routers import SimpleRouter

# Registers the OpenAPI extensions (drf-spectacular finds them by subclassing). Here rather
# than in ApiConfig.ready(): the schema view and `manage.py spectacular` both read this URL
# map before they generate anything, and processes that never do skip the import (ADR 0113).
from api import schema  # noqa: F401
from api.views import catalog, changes, events, impact, lineage, run_links, search

router = SimpleRouter(trailing_slash=False)
router.register("jobs", catalog.JobViewSet, basename="jobs")
router.register("runs", catalog.RunViewSet, basename="runs")
router.register("datasets", catalog.DatasetViewSet, basename="datasets")
router.register("events", events.EventViewSet, basename="events")

urlpatterns = [
    path("namespaces", catalog.NamespaceList.as_view(), name="namespaces"),
    path("lineage/graph", lineage.LineageGraph.as_view(), name="lineage-graph"),
    path("lineage/diff", lineage.LineageDiff.as_view(), name="lineage-diff"),
    path("impact", impact.Impact.as_view(), name="impact"),
    path("changes", changes.ChangeList.as_view(), name="changes"),
    path("search", search.Search.as_view(), name="search"),
    path("events/export", events.EventExport.as_view(), name="events-export"),
    path("metadata", events.MetadataRecordList.as_view(), name="metadata-list"),
    path("jobs/<str:pk>/runs", catalog.JobRunList.as_view(), name="jobs-runs"),
    path("runs/<str:run_id>/inputs", run_links.RunInputList.as_view(), name="runs-inputs"),
    path("runs/<str:run_id>/outputs", run_links.RunOutputList.as_view(), name="runs-outputs"),
    path("datasets/<str:pk>/aliases", catalog.DatasetAliasList.as_view(), name="dataset-aliases"),
    path("stats", events.Stats.as_view(), name="stats"),
    *router.urls,
]

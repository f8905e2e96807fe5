"""The project's URLconf with the read API included before ingest (see test_metadata)."""

from django.urls import include, path

urlpatterns = [
    path("api/v1/", include("api.urls")),
    path("api/v1/", include("ingest.urls")),
]

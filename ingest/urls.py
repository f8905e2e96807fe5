from django.urls import path

from ingest import views

urlpatterns = [
    path("lineage", views.LineageView.as_view(), name="ingest-lineage"),
    path("lineage/batch", views.LineageBatchView.as_view(), name="ingest-lineage-batch"),
    path("lineage/edges", views.EdgeView.as_view(), name="ingest-edges"),
    path("metadata", views.MetadataView.as_view(), name="ingest-metadata"),
]

"""The mount: everything under it goes to one entry view, which routes on the raw path."""

from django.urls import path, re_path

from api.marquez.views import entry

urlpatterns = [
    path("", entry, {"rest": ""}, name="marquez-root"),
    re_path(r"^(?P<rest>.+)$", entry, name="marquez"),
]

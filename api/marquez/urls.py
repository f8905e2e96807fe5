"""The mount: everything under it goes to one entry view, which routes on the raw path."""

from django.urls import path, re_path

from api.marquez.views import entry

urlpatterns = [
    path("", entry, {"rest": ""}, name="marquez-root"),
    # [\s\S] and \Z: a decoded path may hold newlines (%0A), which ".+$" does not match,
    # and such a path fell through to Django's HTML 404 instead of Marquez's error shape.
    re_path(r"^(?P<rest>[\s\S]+)\Z", entry, name="marquez"),
]

"""Which requests are for pages and which for the API (core.pages.for_pages, ADR 0123):
the messages and the admin's viewer run for pages only, both ways tested."""

from typing import Any

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory

from catalog.admin import visibility
from core.pages import for_pages


@pytest.mark.parametrize(
    ("path", "page"),
    [
        ("/", True),
        ("/admin/", True),
        ("/admin/lineage/", True),
        ("/healthz", True),
        ("/apis", True),
        ("/api/v1/runs", False),
        ("/api/docs/", False),
        ("/marquez/api/v1/namespaces", False),
    ],
)
def test_the_api_paths_are_not_pages(path: str, page: bool) -> None:
    assert for_pages(RequestFactory().get(path)) is page


@pytest.mark.django_db
def test_an_api_read_builds_no_message_storage(read_client: Client) -> None:
    response = read_client.get("/api/v1/stats")
    assert response.status_code == 200
    assert not hasattr(response.wsgi_request, "_messages")


@pytest.mark.django_db
def test_a_page_keeps_its_messages(admin_client: Client) -> None:
    response = admin_client.get("/admin/catalog/dataset/")
    assert response.status_code == 200
    assert hasattr(response.wsgi_request, "_messages")


@pytest.mark.parametrize(
    ("path", "kept"), [("/admin/catalog/dataset/", True), ("/api/v1/runs", False)]
)
def test_the_admin_viewer_is_kept_for_pages_only(path: str, kept: bool) -> None:
    seen: list[Any] = []

    def respond(request: Any) -> HttpResponse:
        seen.append(visibility._viewer.get())
        return HttpResponse()

    request = RequestFactory().get(path)
    request.user = user = object()
    visibility.AdminViewerMiddleware(respond)(request)
    assert seen == [user if kept else None]
    assert visibility._viewer.get() is None

"""Read-API fixtures: a warmed-up read client (token cached, so query counts are the view's)."""

import pytest
from django.test import Client


@pytest.fixture
def api(read_client: Client, steady_token_cache: None) -> Client:
    """The read client after one request: the token is resolved and stays cached for the
    test, so pinned query counts are the views' alone."""
    read_client.get("/api/v1/stats")
    return read_client


def results(response) -> list:
    assert response.status_code == 200, response.content
    return response.json()["results"]


def follow_all(client: Client, url: str) -> list:
    """Every item of a cursor-paginated list, page by page."""
    items = []
    while url:
        body = client.get(url).json()
        items.extend(body["results"])
        url = body["next"]
    return items

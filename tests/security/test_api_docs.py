"""/api/docs/ loads swagger-ui from the project's own static files: no CDN (unpinned, no
integrity, a third party's script on the admin's origin, and nothing at all offline)."""

import re

from django.contrib.staticfiles import finders
from django.test import Client


def test_api_docs_load_every_asset_from_our_static_files() -> None:
    page = Client().get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any(asset.endswith("swagger-ui-bundle.js") for asset in assets), assets
    for asset in assets:
        assert asset.startswith("/static/"), asset
        assert finders.find(asset.removeprefix("/static/")), f"{asset} is not shipped"
    assert "cdn" not in html.lower() and "https://" not in html

"""What the admin's pages send for a laptop's width (issue 39), without a browser: parent
edges styled apart and in the legend, a Runs list of short cells, an icon at /favicon.ico.
The browser checks the same pages drawn: tests/admin/test_browser_widths.py."""

import re

import pytest
from django.test import Client

from catalog.models import Job, Run
from catalog.services import demo as catalog_demo

ICO_HEADER = b"\x00\x00\x01\x00"  # reserved 0, type 1 (icon)


@pytest.fixture
def demo(db: None) -> None:
    catalog_demo.load_demo()


def test_parent_edges_have_their_own_arrow_and_legend_entry(
    demo: None, super_client: Client
) -> None:
    dag = Job.objects.get(namespace=catalog_demo.DAG[0], name=catalog_demo.DAG[1])
    page = super_client.get(f"/admin/catalog/job/{dag.pk}/change/").content.decode()
    parents = re.findall(r'<path class="lc-edge lc-edge-parent[^"]*" data-source[^>]*>', page)
    assert len(parents) == dag.children.count() == 4
    assert all('marker-end="url(#lc-arrow-parent)"' in edge for edge in parents)
    others = re.findall(r'<path class="lc-edge lc-edge-(?:input|output)[^"]*"[^>]*>', page)
    assert others and all("lc-arrow-parent" not in edge for edge in others)
    assert 'id="legend-parent"' in page and "parent job → child job" in page
    assert 'id="legend-column-input"' in page  # the style parent edges were mistaken for


def test_the_runs_list_shows_a_short_run_id_and_the_whole_in_its_tooltip(
    demo: None, super_client: Client
) -> None:
    page = super_client.get("/admin/catalog/run/").content.decode()
    for run in Run.objects.all():
        full = str(run.run_uuid)
        assert f'title="{full}">{full[:8]}…{full[-4:]}</span>' in page
        assert f">{full}<" not in page  # never the whole UUID as the cell's text
    assert "Started (UTC)" in page and "p.m." not in page and "a.m." not in page


def test_favicon_answers_with_an_icon_and_pages_link_theirs(
    client: Client, super_client: Client
) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content.startswith(ICO_HEADER)
    link = '<link rel="icon" href="/static/catalog/favicon.svg" type="image/svg+xml">'
    assert link in client.get("/").content.decode()
    assert link in client.get("/admin/login/").content.decode()
    assert link in super_client.get("/admin/").content.decode()

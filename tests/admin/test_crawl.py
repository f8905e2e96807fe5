"""Stewards and readers can open every admin page any admin page links to (issue 29, item 5).

The groups' permissions come from the admin's registry (catalog/permissions.py, applied on
post_migrate): before, job lineage edges were missing from a hand-kept list, and a steward
clicking "lineage edges" on a job page got a 403. This crawls from the admin index, as a
steward and as a reader (the real groups), following every admin link on every page it
opens (one of each kind of page, query strings included), and finds none refused.
"""

import html
import re
from collections import deque
from functools import cache
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import Client

from catalog.permissions import READERS, STEWARDS, registry_read_models

pytestmark = pytest.mark.django_db
# Pages opened per kind of link (ids and values folded together). One reaches every kind:
# two opened 865 pages (25.2 CPU s as a steward) where one opens 470 (13.1), and with two the
# budget cut the crawl at 600 pages before it had reached every kind.
PER_KIND = 1
BUDGET = 600  # a bound, not a cut: the test asserts the crawl ended before it
SKIP = ("/admin/logout/", "/admin/jsi18n/", "/admin/r/")


@cache
def _kind(url: str) -> str:
    """Pages of one kind: the path with ids folded, and the names of the query's parameters.
    Kept per address: each page links to most of the same ones (the sidebar's ~80)."""
    parts = urlsplit(url)
    names = sorted({pair.split("=", 1)[0] for pair in parts.query.split("&") if pair})
    return re.sub(r"/\d+/", "/N/", parts.path) + "?" + "&".join(names)


def _target(url: str, href: str) -> str:
    """``urljoin(url, href)``: most links are a path from the root or a query on this page,
    joined here without urljoin's parsing (a twentieth of the crawl's CPU)."""
    if href.startswith("/") and not href.startswith("//"):
        return href
    if href.startswith("?") and href != "?":  # a bare "?" is this page, query and all
        return url.split("?", 1)[0] + href
    return urljoin(url, href)


def crawl(client: Client) -> tuple[dict[str, int], int, bool]:
    """Status of every page opened, how many links were seen in all, and whether every
    page queued was opened within the budget."""
    queue, seen_kinds, statuses, links = deque(["/admin/"]), {}, {}, 0
    while queue and len(statuses) < BUDGET:
        url = queue.popleft()
        if url in statuses:
            continue
        response = client.get(url)
        statuses[url] = response.status_code
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        for href in re.findall(r'href="([^"#]*)', response.content.decode()):
            target = _target(url, html.unescape(href))
            if not target.startswith("/admin/") or target.startswith(SKIP):
                continue
            links += 1
            kind = _kind(target)
            if seen_kinds.get(kind, 0) < PER_KIND and target not in statuses:
                seen_kinds[kind] = seen_kinds.get(kind, 0) + 1
                queue.append(target)
    return statuses, links, not queue


@pytest.mark.parametrize("who", ["steward", "reader"])
def test_no_page_an_admin_page_links_to_is_refused(catalog, request, who):
    client: Client = request.getfixturevalue(f"{who}_client")
    statuses, links, complete = crawl(client)
    assert complete, f"the crawl reached its budget of {BUDGET} pages before every kind"
    refused = {url: status for url, status in statuses.items() if status in (403, 302)}
    broken = {url: status for url, status in statuses.items() if status >= 500}
    assert not refused and not broken, (refused, broken)
    # The crawl reached the pages in question, not only the index.
    opened = set(statuses)
    assert any("/admin/catalog/joblineageedge/" in url for url in opened)
    assert any(re.search(r"/admin/catalog/job/\d+/change/", url) for url in opened)
    assert len(opened) > 40 and links > len(opened)


def test_the_groups_hold_the_view_permission_of_every_registered_model(groups):
    from django.contrib.auth.models import Group

    for name in (READERS, STEWARDS):
        held = set(
            Group.objects.get(name=name).permissions.values_list(
                "content_type__app_label", "codename"
            )
        )
        for app_label, models in registry_read_models().items():
            for model in models:
                assert (app_label, f"view_{model}") in held, (name, app_label, model)
    assert ("catalog", "joblineageedge") in {
        (label, model) for label, models in registry_read_models().items() for model in models
    }

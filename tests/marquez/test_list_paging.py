"""``limit`` and ``offset`` on the mount's ``/tags`` and ``/search``, as on its other lists
(api/marquez/paging.py): Marquez's ``GET /tags`` takes both (its openapi.yml, TagDao's
``LIMIT :limit OFFSET :offset``), and both lists ignored ``offset`` (``/tags`` ``limit``
too), so a client paging them got the first page again and again."""

from urllib.parse import quote

import pytest
from django.test import Client

from api.marquez import paging
from catalog.models import TagDescription
from ingest.services import create_token
from tests.marquez.conftest import S3, MarquezClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_once: None, db: None) -> None:
    """The conftest's world, written once for this module's tests (ADR 0210)."""


ERROR = {"code", "message", "details"}
DAILY = f"/marquez/api/v1/namespaces/{quote(S3, safe='')}/datasets/raw%2Forders%2Fdaily"


def _names(mz: MarquezClient, path: str, key: str, **params: str) -> list[str]:
    response = mz.get(path, **params)
    assert response.status_code == 200, response.content
    return [item["name"] for item in response.json()[key]]


def test_tags_are_paged_by_name_across_used_and_described_tags(world, mz):
    """Three described tags and two in use on a dataset, one of them described too: one
    list by name, each page the next names, a description on the described ones only."""
    curate = Client(HTTP_AUTHORIZATION=f"Bearer {create_token('ci', 'curate')[1]}")
    for tag in ("b", "d"):
        path = f"{DAILY}/tags/{tag}"
        assert curate.post(path, RAW_URI=path).status_code == 200
    TagDescription.objects.bulk_create(
        TagDescription(name=name, description=f"about {name}") for name in ("a", "c", "d")
    )
    assert _names(mz, "/tags", "tags") == ["a", "b", "c", "d"]
    pages = [_names(mz, "/tags", "tags", limit="1", offset=str(n)) for n in range(5)]
    assert pages == [["a"], ["b"], ["c"], ["d"], []]
    assert _names(mz, "/tags", "tags", limit="2", offset="1") == ["b", "c"]
    page = mz.get("/tags", limit="2", offset="2").json()["tags"]
    assert page == [
        {"name": "c", "description": "about c"},
        {"name": "d", "description": "about d"},
    ]


def test_tags_take_the_default_limit_and_clamp_it(world, mz):
    """Marquez's default page is 100 names; ``limit`` is 0-500 as elsewhere."""
    TagDescription.objects.bulk_create(
        TagDescription(name=f"t{number:03}", description="") for number in range(501)
    )
    assert len(_names(mz, "/tags", "tags")) == paging.DEFAULT_LIMIT
    assert len(_names(mz, "/tags", "tags", limit="0")) == 0
    assert len(_names(mz, "/tags", "tags", limit="100000")) == paging.MAX_LIMIT
    assert _names(mz, "/tags", "tags", limit="1", offset="500") == ["t500"]


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "many"},
        {"offset": "later"},
        {"offset": "-1"},
        {"offset": str(paging.MAX_OFFSET + 1)},
    ],
)
def test_bad_tag_paging_is_400_in_marquez_shape(world, mz, params):
    response = mz.get("/tags", **params)
    assert response.status_code == 400, response.content
    assert set(response.json()) == ERROR and response.json()["message"]


def test_search_pages_by_offset(world, mz):
    """The world has three hits for "orders" (two datasets, a job): one a page, each page
    the next by name (the default sort, applied before the page: ADR 0175), then none."""
    whole = _names(mz, "/search", "results", q="orders", limit="10")
    assert len(whole) == 3
    pages = [
        _names(mz, "/search", "results", q="orders", limit="1", offset=str(n)) for n in range(4)
    ]
    assert [len(page) for page in pages] == [1, 1, 1, 0]
    assert [name for page in pages for name in page] == whole


@pytest.mark.parametrize("offset", ["later", "-1", str(paging.MAX_OFFSET + 1)])
def test_bad_search_offsets_are_400_in_marquez_shape(world, mz, offset):
    response = mz.get("/search", q="orders", offset=offset)
    assert response.status_code == 400, response.content
    assert set(response.json()) == ERROR

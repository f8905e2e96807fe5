"""The mount's search filters and orders every match before its ``limit`` and ``offset``
(ADR 0175), as Marquez's SearchDao does in SQL before its ``LIMIT``: ``namespace``,
``before``/``after`` and ``sort`` applied to the page the ranked search returned, so with the
default of 10 a search filtered to a namespace answered fewer hits than it holds (none
here), ``sort=NAME`` sorted the ten most relevant hits and ``totalCount`` counted the page.

The store: twelve jobs named ``orders`` in namespaces ``other_00``-``other_11`` (the exact
name: the best rank), last seen on 1 November, and three in ``shop`` whose names only
contain ``orders``, ranked below them, seen later and first by name."""

from datetime import timedelta

import pytest

from catalog.reads import search as search_reads
from tests.api.factories import T0, add_alias, add_fields, make_dataset, make_job
from tests.marquez.conftest import MarquezClient

pytestmark = pytest.mark.django_db

SHOP = ["daily_orders_a", "daily_orders_b", "daily_orders_c"]


@pytest.fixture
def store() -> None:
    for number in range(12):
        make_job("orders", namespace=f"other_{number:02}")
    for day, name in enumerate(SHOP, start=1):
        make_job(name, namespace="shop", last_seen=T0 + timedelta(days=day))


def _search(mz: MarquezClient, **params: str) -> dict:
    response = mz.get("/search", q="orders", **params)
    assert response.status_code == 200, response.content
    return response.json()


def _names(body: dict) -> list[tuple[str, str]]:
    return [(hit["namespace"], hit["name"]) for hit in body["results"]]


def test_a_namespace_holds_its_hits_past_the_first_page(store, mz: MarquezClient):
    """The twelve ``orders`` outrank shop's three: the page of ten held none of them."""
    body = _search(mz, namespace="shop")
    assert _names(body) == [("shop", name) for name in SHOP]
    assert body["totalCount"] == 3
    assert _search(mz, namespace="nowhere") == {"totalCount": 0, "results": []}


def test_days_filter_every_match(store, mz: MarquezClient):
    """Only shop's jobs were seen after 1 November (at midnight of the 2nd, 3rd and 4th):
    the ten best, all seen on the 1st, hid them."""
    body = _search(mz, after="2026-11-02")
    assert _names(body) == [("shop", "daily_orders_b"), ("shop", "daily_orders_c")]
    assert body["totalCount"] == 2
    assert _names(_search(mz, after="2026-11-01", before="2026-11-03")) == [
        ("shop", "daily_orders_a")
    ]
    assert _search(mz, before="2026-11-02", namespace="shop")["results"] == []


def test_sort_by_name_orders_every_match(store, mz: MarquezClient):
    """The first names of all fifteen, then the next page after them."""
    first = _search(mz, sort="NAME", limit="2")
    assert _names(first) == [("shop", "daily_orders_a"), ("shop", "daily_orders_b")]
    assert first["totalCount"] == 15
    whole = _names(_search(mz, sort="NAME", limit="100"))
    assert whole == sorted(whole, key=lambda hit: (hit[1], hit[0]))
    pages = [_names(_search(mz, sort="NAME", limit="4", offset=str(n))) for n in (0, 4, 8, 12)]
    assert [hit for page in pages for hit in page] == whole


def test_sort_by_update_orders_every_match(store, mz: MarquezClient):
    """The most recently seen first, of all fifteen."""
    body = _search(mz, sort="UPDATE_AT", limit="1")
    assert _names(body) == [("shop", "daily_orders_c")]
    assert body["results"][0]["updatedAt"] == "2026-11-04T00:00:00Z"
    updated = [hit["updatedAt"] for hit in _search(mz, sort="UPDATED_AT", limit="20")["results"]]
    assert updated == sorted(updated, reverse=True) and len(updated) == 15


def test_total_count_counts_every_match(store, mz: MarquezClient):
    """Fifteen matches: a page of ten counts fifteen, as the mount's other lists count."""
    body = _search(mz)
    assert len(body["results"]) == 10 and body["totalCount"] == 15
    assert _search(mz, limit="0") == {"totalCount": 15, "results": []}
    assert _search(mz, offset="15") == {"totalCount": 15, "results": []}
    assert _search(mz, filter="DATASET")["totalCount"] == 0


def test_the_namespace_filter_is_applied_inside_the_candidate_branches(
    store, mz: MarquezClient, monkeypatch: pytest.MonkeyPatch
):
    """Each branch reads at most CANDIDATES_PER_BRANCH matches: of the namespace's, so a
    namespace's matches are not crowded out by other namespaces' (two candidates here)."""
    monkeypatch.setattr(search_reads, "CANDIDATES_PER_BRANCH", 2)
    assert _names(_search(mz, namespace="shop", sort="NAME")) == [
        ("shop", "daily_orders_a"),
        ("shop", "daily_orders_b"),
    ]


def test_a_dataset_is_in_its_own_namespace_whatever_alias_matched(mz: MarquezClient):
    """A dataset found by an alias named in another namespace (a symlink), by a column or
    by its description is filtered by the namespace it is shown in, as before."""
    table = make_dataset("warehouse.sales", namespace="postgres://db")
    add_alias(table, "hive://meta", "legacy.orders")
    columns = make_dataset("warehouse.items", namespace="postgres://db")
    add_fields(columns, "orders_id")
    make_dataset("lake.facts", namespace="s3://lake", description="All orders ever placed")
    found = _search(mz, namespace="postgres://db", sort="NAME")
    assert _names(found) == [
        ("postgres://db", "warehouse.items"),
        ("postgres://db", "warehouse.sales"),
    ]
    assert _search(mz, namespace="hive://meta")["results"] == []
    assert _names(_search(mz, namespace="s3://lake")) == [("s3://lake", "lake.facts")]


def test_the_search_is_one_statement(store, mz: MarquezClient, django_assert_num_queries):
    """The hits, their count and when each was last seen, filtered and ordered: one round
    trip (the SET LOCALs with it, ADR 0111) inside the request's savepoint, statement timeout
    and release. It was three: the page, then the last-seen times of its datasets and of
    its jobs (six in all)."""
    mz.get("/search", q="warmup")  # the token resolved and cached (steady_token_cache)
    with django_assert_num_queries(4):
        _search(mz, namespace="shop", after="2026-11-01", sort="UPDATE_AT")

"""A dataset detail shows its first aliases, how many it has and where the rest are; the
aliases list pages through them all (ADR 0180). A table a producer symlinks under a new
name in every run gathers tens of thousands: 50,000 were 11.9 MB of detail."""

import pytest

from catalog.models import Dataset, DatasetAlias
from catalog.reads.datasets import DETAIL_ALIASES
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.api.conftest import follow_all, results
from tests.api.factories import T0, add_symlink_aliases, make_dataset

pytestmark = pytest.mark.django_db

MORE = DETAIL_ALIASES + 57  # and the dataset's own name: MORE + 1 aliases


def _symlinked(count: int) -> Dataset:
    """A dataset with ``count`` symlink aliases besides its own name."""
    dataset = make_dataset("shop.public.orders")
    add_symlink_aliases(dataset, count)
    return dataset


def _by_name(dataset) -> list[tuple[str, str]]:
    aliases = DatasetAlias.objects.filter(dataset=dataset).order_by("namespace", "name", "id")
    return list(aliases.values_list("namespace", "name"))


@pytest.mark.parametrize("path", ["/api/v1/datasets/{id}", "/api/v1/datasets/lookup"])
def test_the_detail_shows_the_first_aliases_by_name_and_their_count(api, path):
    dataset = _symlinked(MORE)
    query = {"namespace": "postgres://db:5432", "name": "shop.public.orders"}
    body = api.get(path.format(id=dataset.id), query if "lookup" in path else {}).json()
    shown = [(alias["namespace"], alias["name"]) for alias in body["aliases"]]
    assert shown == _by_name(dataset)[:DETAIL_ALIASES]
    assert body["alias_count"] == MORE + 1
    assert body["aliases_url"] == f"http://testserver/api/v1/datasets/{dataset.id}/aliases"


def test_a_dataset_with_few_aliases_shows_them_all(api):
    dataset = _symlinked(3)
    body = api.get(f"/api/v1/datasets/{dataset.id}").json()
    assert [(a["namespace"], a["name"]) for a in body["aliases"]] == _by_name(dataset)
    assert body["alias_count"] == 4
    assert body["aliases"][0]["reason_detail"] == "symlinks"


def test_the_aliases_list_pages_through_every_alias_oldest_first(api):
    dataset = _symlinked(MORE)
    make_dataset("shop.public.other")  # not its alias
    url = api.get(f"/api/v1/datasets/{dataset.id}").json()["aliases_url"]
    items = follow_all(api, f"{url}?limit=100")
    ids = list(DatasetAlias.objects.filter(dataset=dataset).order_by("id").values_list("name"))
    assert [(item["name"],) for item in items] == ids
    assert len(items) == MORE + 1
    assert items[1] == {
        "namespace": "hive://meta:9083",
        "name": f"snap_{MORE - 1:06}",
        "reason": "symlink",
        "reason_detail": "symlinks",
        "reason_event_id": None,
        "reason_rule": None,
        "first_seen": items[1]["first_seen"],
        "last_seen": items[1]["last_seen"],
    }


def test_the_aliases_list_queries(api, django_assert_num_queries):
    dataset = _symlinked(MORE)
    # 1 the dataset is there (and not retired), 2 the page with the aliases' rules
    with django_assert_num_queries(2):
        assert len(api.get(f"/api/v1/datasets/{dataset.id}/aliases").json()["results"]) == 50


def test_the_aliases_of_no_dataset_or_a_retired_one_are_404(api):
    assert api.get("/api/v1/datasets/999999/aliases").status_code == 404
    bad = api.get("/api/v1/datasets/x/aliases")  # as /datasets/x: no row has that id
    assert bad.status_code == 404
    assert bad["Content-Type"] == "application/problem+json"
    dataset = _symlinked(2)
    retirement.retire(dataset, Actor("token:ci"), "gone")
    assert api.get(f"/api/v1/datasets/{dataset.id}").status_code == 404
    assert api.get(f"/api/v1/datasets/{dataset.id}/aliases").status_code == 404


def test_a_list_item_shows_the_first_aliases_by_name_and_their_count(
    api, django_assert_num_queries
):
    dataset = _symlinked(MORE)
    few = make_dataset("shop.public.few")
    bare = Dataset.objects.create(namespace="s3://lake", name="bare", first_seen=T0, last_seen=T0)
    with django_assert_num_queries(2):  # the page with the counts, its aliases (the pin's)
        items = {item["id"]: item for item in results(api.get("/api/v1/datasets"))}
    shown = [(alias["namespace"], alias["name"]) for alias in items[dataset.id]["aliases"]]
    assert shown == _by_name(dataset)[:DETAIL_ALIASES]
    assert items[dataset.id]["alias_count"] == MORE + 1
    assert items[few.id]["alias_count"] == 1
    assert [a["name"] for a in items[few.id]["aliases"]] == ["shop.public.few"]
    assert (items[bare.id]["aliases"], items[bare.id]["alias_count"]) == ([], 0)

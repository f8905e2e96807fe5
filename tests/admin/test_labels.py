"""A steward's tags and owners in the admin (issue 41 item 1, ADR 0083): added and hidden
from the add form (prefilled from a dataset's page), shown as columns, filtered, deleted."""

import pytest
from django.test import Client
from django.urls import reverse

from catalog.models import Dataset, StewardLabel
from tests.api.project_fixtures import derive
from tests.catalog.facets.test_tags_and_owners import spec_event
from tests.catalog.facets.world import OUTPUT

pytestmark = pytest.mark.django_db


def test_a_steward_tags_hides_filters_and_deletes(steward_client: Client) -> None:
    derive(spec_event())
    dataset = Dataset.objects.for_alias(*OUTPUT).get()
    page = steward_client.get(reverse("admin:catalog_dataset_change", args=[dataset.id]))
    assert page.status_code == 200
    assert b"test_tag2=test_value2" in page.content and b"add a tag or owner" in page.content
    add = reverse("admin:catalog_stewardlabel_add")
    for posted in (
        {"key": "gold", "value": ""},
        {"key": "test_tag2", "value": "", "hides": "on"},
    ):
        response = steward_client.post(
            add,
            {
                "target": "dataset",
                "namespace": OUTPUT[0],
                "name": OUTPUT[1],
                "kind": "tag",
                "field": "",
                **posted,
            },
        )
        assert response.status_code == 302, response.content
    changelist = reverse("admin:catalog_dataset_changelist")
    listed = steward_client.get(changelist, {"tag": "gold"})
    assert listed.status_code == 200 and OUTPUT[1].encode() in listed.content
    assert b"gold" in listed.content
    assert OUTPUT[1].encode() not in steward_client.get(changelist, {"tag": "test_tag2"}).content
    nowhere = steward_client.post(
        add,
        {"target": "job", "namespace": "nowhere", "name": "none", "kind": "owner", "key": "x"},
    )
    assert nowhere.status_code == 200 and b"No job is named" in nowhere.content
    hiding = StewardLabel.objects.get(hides=True)
    delete = reverse("admin:catalog_stewardlabel_delete", args=[hiding.pk])
    assert steward_client.post(delete, {"post": "yes"}).status_code == 302
    assert OUTPUT[1].encode() in steward_client.get(changelist, {"tag": "test_tag2"}).content

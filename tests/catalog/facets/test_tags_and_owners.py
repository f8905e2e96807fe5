"""Owners and tags are first-class (issue 41 item 1, ADR 0083): the spec's own examples of
the tags and ownership facets, derived order-independently (the newest event's set wins),
shown by /api/v1 and the Marquez mount, filtered (?tag=, ?owner=) and searched; a
steward's own tags and owners, and a hidden producer tag, survive a full rederive."""

import json
from copy import deepcopy
from typing import Any

import pytest

from catalog.facets import ownership, schema, tags
from catalog.models import Dataset, Job, LabelKind
from catalog.services import labels
from catalog.services.derive import rederive
from tests.api.project_fixtures import derive
from tests.catalog.facets.spec_examples import EXAMPLES
from tests.catalog.facets.world import OUTPUT, Reads, event, facet, ok

pytestmark = pytest.mark.django_db


def example(schema_file: str) -> dict[str, Any]:
    """The facet of the spec's example ``spec/tests/<schema_file>/1.json``."""
    [value] = json.loads((EXAMPLES / schema_file / "1.json").read_text()).values()
    return value


def spec_event(**overrides: Any) -> dict[str, Any]:
    """The world's run with the spec's tags and ownership examples where the spec puts them."""
    sent = event(
        job={
            tags.NAME: example("TagsJobFacet"),
            ownership.NAME: example("OwnershipJobFacet"),
        },
        run={tags.NAME: example("TagsRunFacet")},
        output_facets={
            tags.NAME: example("TagsDatasetFacet"),
            ownership.NAME: example("OwnershipDatasetFacet"),
            schema.NAME: facet("1-2-0/SchemaDatasetFacet", fields=[{"name": "email"}]),
        },
    )
    return {**sent, **overrides}


def visible(key: str, value: str, field: str = "", origin: str = "", source: str = "producer"):
    return {"key": key, "value": value, "field": field, "source": source, "origin": origin}


def test_the_spec_examples_become_tags_and_owners_everywhere(api, mz):
    derive(spec_event())
    reads = Reads(api, mz)
    job, dataset, run = reads.job(), reads.dataset(), reads.run()
    assert job["tags"] == [
        visible("test_tag", "test_value", origin="test_source"),
        visible("test_tag2", "test_value2"),
    ]
    assert run["tags"] == job["tags"]
    assert dataset["tags"] == [
        visible("test_tag2", "test_value2"),
        visible("test_tag", "test_value", field="email", origin="test_source"),
    ]
    assert (
        job["owners"] == dataset["owners"] == [{"name": "owner", "type": "", "source": "producer"}]
    )
    listed = ok(api.get("/api/v1/datasets", {"tag": "test_tag"}))["results"]
    assert [row["id"] for row in listed] == [dataset["id"]]  # a column's tag finds it too
    assert listed[0]["tags"] == dataset["tags"]
    # Marquez names a tag key:value; the column's tag is on its field.
    mz_dataset = reads.mz_dataset()
    assert mz_dataset["tags"] == ["test_tag2:test_value2"]
    assert mz_dataset["fields"][0]["tags"] == ["test_tag:test_value"]
    assert reads.mz_version()["fields"][0]["tags"] == ["test_tag:test_value"]
    assert reads.mz_job()["tags"] == ["test_tag2:test_value2", "test_tag:test_value"]
    assert ok(mz.get("/tags"))["tags"] == [
        {"name": "test_tag2:test_value2", "description": None},
        {"name": "test_tag:test_value", "description": None},
    ]


@pytest.mark.parametrize("order", ["newest last", "newest first"])
def test_the_newest_events_set_wins_whatever_the_order(order, api, mz):
    older = spec_event(eventTime="2026-03-01T10:00:00Z")
    newer = deepcopy(older)
    newer["eventTime"] = "2026-03-01T11:00:00Z"
    newer["job"]["facets"][tags.NAME]["tags"] = [{"key": "tier", "value": "gold"}]
    newer["job"]["facets"][ownership.NAME]["owners"] = [{"name": "team:data", "type": "OWNER"}]
    derive(*([older, newer] if order == "newest last" else [newer, older]))
    job = Reads(api, mz).job()
    assert job["tags"] == [visible("tier", "gold")]
    assert job["owners"] == [{"name": "team:data", "type": "OWNER", "source": "producer"}]


def test_filters_and_search_find_by_tag_and_owner(api, mz, django_assert_num_queries):
    derive(spec_event())
    other = event()
    other["job"]["name"], other["outputs"][0]["name"] = "untagged.job", "marts/untagged"
    derive(other)
    job = Job.objects.get(name="orders.daily")
    dataset = Dataset.objects.for_alias(*OUTPUT).get()
    for path, params, expected in [
        ("jobs", {"tag": "test_tag2"}, [job.id]),
        ("jobs", {"tag": "test_tag2:test_value2"}, [job.id]),
        ("jobs", {"tag": "test_tag2:other"}, []),
        ("jobs", {"owner": "owner"}, [job.id]),
        ("datasets", {"owner": "owner"}, [dataset.id]),
        ("datasets", {"owner": "nobody"}, []),
    ]:
        found = ok(api.get(f"/api/v1/{path}", params))["results"]
        assert [row["id"] for row in found] == expected, (path, params)
    hits = ok(api.get("/api/v1/search", {"q": "test_tag2"}))["results"]
    assert {(hit["type"], hit["id"], hit["matched_field"]) for hit in hits} == {
        ("job", job.id, "tag"),
        ("dataset", dataset.id, "tag"),
    }
    hits = ok(api.get("/api/v1/search", {"q": "owner"}))["results"]
    assert ("job", job.id, "owner") in {(h["type"], h["id"], h["matched_field"]) for h in hits}


def test_a_stewards_tags_and_hidings_survive_a_rederive(api, mz, django_user_model):
    user = django_user_model.objects.create(username="steward")
    derive(spec_event())
    dataset = Dataset.objects.for_alias(*OUTPUT).get()
    job = Job.objects.get(name="orders.daily")
    labels.label_holder(user, dataset, LabelKind.TAG, "pii", "true", field="email")
    labels.label_holder(user, dataset, LabelKind.TAG, "test_tag2", hides=True)
    labels.label_holder(user, job, LabelKind.OWNER, "team:payments", "STEWARD")
    labels.label_holder(user, job, LabelKind.OWNER, "owner", hides=True)

    def check() -> None:
        reads = Reads(api, mz)
        assert reads.dataset()["tags"] == [
            visible("test_tag", "test_value", field="email", origin="test_source"),
            visible("pii", "true", field="email", source="steward"),
        ]
        assert reads.job()["owners"] == [
            {"name": "team:payments", "type": "STEWARD", "source": "steward"}
        ]
        # Hidden, not lost: the projection keeps the producer's entry.
        stored = Dataset.objects.get(id=dataset.id).tags
        assert {"key": "test_tag2", "hidden": True}.items() <= stored[0].items()
        assert ok(api.get("/api/v1/datasets", {"tag": "test_tag2"}))["results"] == []
        assert len(ok(api.get("/api/v1/datasets", {"tag": "pii"}))["results"]) == 1

    check()
    assert rederive(batch_size=1).failed == 0
    check()
    [hiding] = labels.StewardLabel.objects.filter(hides=True, kind=LabelKind.TAG)
    labels.unlabel(user, hiding)
    assert len(ok(api.get("/api/v1/datasets", {"tag": "test_tag2"}))["results"]) == 1


def test_a_schema_fields_own_tags_tag_the_column(api, mz):
    fields = [{"name": "customer", "fields": [{"name": "email", "tags": [{"key": "pii"}]}]}]
    derive(event(output_facets={schema.NAME: facet("1-2-0/SchemaDatasetFacet", fields=fields)}))
    assert Reads(api, mz).dataset()["tags"] == [visible("pii", "", field="customer.email")]

"""Every admin page renders with a small, fixed number of queries (ADR 0040).

The limits do not grow with the data: related rows are bounded tables (one query each,
LIMIT n+1), lists never count whole tables and select their foreign keys with the rows.
Common to every page: session + user (2). Changelists add: the page (1), the capped or
estimated count (1-2), sometimes the permission checks of actions (0 for superusers).
"""

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.test import Client

from catalog.models import (
    AliasLink,
    AliasRule,
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    DatasetField,
    EventDataset,
    Job,
    JobDataset,
    JobLineageEdge,
    LabelKind,
    LineageEdge,
    LineageEdgeRun,
    MetadataRecord,
    Run,
    RunDataset,
    StewardLabel,
)
from catalog.services import labels
from ingest.models import ApiToken, Event
from tests.admin.conftest import make_user, write_catalog

MODELS = [
    Event,
    ApiToken,
    Job,
    Run,
    Dataset,
    DatasetAlias,
    AliasLink,
    AliasRule,
    StewardLabel,
    LineageEdge,
    LineageEdgeRun,
    JobLineageEdge,
    ColumnLineageEdge,
    DatasetField,
    RunDataset,
    JobDataset,
    EventDataset,
    MetadataRecord,
    LogEntry,
]
# session, user, list page, estimated/capped count (pg_class + capped count), filters' own
# queries, select-all count for actions; 10 leaves room for one SimpleListFilter query.
CHANGELIST_MAX = 10
# session, user, object, plus one query per bounded related table (a dataset page has the
# most: aliases, upstream, downstream, producing runs, jobs, fields) and the log-entry check.
CHANGE_PAGE_MAX = 14
# Dataset and job pages also draw the lineage picture: the graph walk's fixed handful of
# queries plus the cut markers' count (tests/admin/test_lineage_picture.py pins it alone),
# and the drawn jobs' control edges (12 → 13, issue 41 item 4, ADR 0090).
PICTURE_MAX = 13
# A dataset page's column lineage table: observed edges, which are current, declared ones.
COLUMN_LINEAGE_TABLE = 3
# A job page's own tables beyond the related rows: its latest test results (issue 41 item 6)
# and its change records (issue 40 item 3), one query each.
JOB_TESTS_AND_CHANGES = 2


def _url(model: type, suffix: str) -> str:
    meta = model._meta
    return f"/admin/{meta.app_label}/{meta.model_name}/{suffix}"


@pytest.fixture(scope="module")
def _everything_once(module_transaction: Callable[[], AbstractContextManager[None]]) -> None:
    # Written once for the module's tests, not once for each of them (ADR 0147): they read
    # it, and what one writes is rolled back to it (ADR 0113).
    with module_transaction():
        write_catalog()
        root = Client()
        root.force_login(make_user("root", superuser=True))
        AliasRule.objects.create(
            slug="raw-orders",
            namespace="s3://lake",
            name_pattern="raw/(.*)",
            target_namespace="s3://lake",
            target_name=r"\1",
        )
        root.post("/admin/ingest/apitoken/add/", {"name": "t", "scope": "read"})
        dataset = Dataset.objects.order_by("id").first()
        assert dataset is not None
        labels.label_holder(User.objects.get(username="root"), dataset, LabelKind.TAG, "gold")


@pytest.fixture
def everything(_everything_once: None, db: None) -> None:
    """The derived catalog of ``lineage_events()``, an alias rule, a read token added in the
    admin and a tag, written by the superuser ``root``."""


@pytest.fixture
def superuser(_everything_once: None, db: None) -> User:
    return User.objects.get(username="root")


@pytest.mark.django_db
@pytest.mark.parametrize("model", MODELS, ids=lambda model: model._meta.label)
def test_changelist_queries_are_bounded(
    model: type, everything: None, super_client: Client, django_assert_max_num_queries: object
) -> None:
    with django_assert_max_num_queries(CHANGELIST_MAX):  # type: ignore[operator]
        response = super_client.get(_url(model, ""))
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("model", MODELS, ids=lambda model: model._meta.label)
def test_change_page_queries_are_bounded(
    model: type, everything: None, super_client: Client, django_assert_max_num_queries: object
) -> None:
    obj = model.objects.order_by("pk").first()
    assert obj is not None, f"the test catalog has no {model.__name__}"
    limit = CHANGE_PAGE_MAX + (PICTURE_MAX if model in (Dataset, Job) else 0)
    limit += COLUMN_LINEAGE_TABLE if model is Dataset else 0
    limit += JOB_TESTS_AND_CHANGES if model is Job else 0
    # The page looks up its model's content type, which Django caches for the process: the
    # first test to ask paid one query more than the others (27 of 26, run alone).
    ContentType.objects.get_for_model(model)
    with django_assert_max_num_queries(limit):  # type: ignore[operator]
        response = super_client.get(_url(model, f"{obj.pk}/change/"))
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "/admin/catalog/run/?state__exact=FAIL&started_within=today",
        "/admin/catalog/dataset/?aliases=several",
        "/admin/ingest/event/?derivation_status__exact=failed",
        "/admin/ingest/event/?q=https://example.com/admin-tests",
        "/admin/catalog/dataset/?q=s3://lake/orders",
        "/admin/catalog/datasetalias/?q=s3://lake/orders",
        "/admin/catalog/job/?q=etl/report",
        "/admin/catalog/lineageedge/?target=1",
        "/admin/catalog/run/?produced=1",
        "/admin/ingest/event/?dataset=1",
        "/admin/ingest/event/?alias=1",
        "/admin/ingest/event/?facet_problems=yes",
        "/admin/catalog/run/?shares_run_id=yes",
        "/admin/catalog/joblineageedge/?dataset=1",
        "/admin/catalog/joblineageedge/?job=1",
    ],
)
def test_steward_questions_are_bounded_filters(
    query: str, everything: None, super_client: Client, django_assert_max_num_queries: object
) -> None:
    with django_assert_max_num_queries(CHANGELIST_MAX):  # type: ignore[operator]
        response = super_client.get(query)
    assert response.status_code == 200, query


@pytest.mark.django_db
def test_failed_runs_today_lists_the_failed_run(everything: None, super_client: Client) -> None:
    page = super_client.get("/admin/catalog/run/?state__exact=FAIL").content.decode()
    assert "etl/report" in page
    assert "etl/load_orders" not in page


@pytest.mark.django_db
def test_datasets_with_several_aliases(everything: None, super_client: Client) -> None:
    page = super_client.get("/admin/catalog/dataset/?aliases=several").content.decode()
    assert "lake.orders" in page  # hive + s3 names of one dataset
    assert "orders_report" not in page


@pytest.mark.django_db
def test_search_by_any_alias_finds_the_dataset(everything: None, super_client: Client) -> None:
    page = super_client.get("/admin/catalog/dataset/?q=s3://lake/orders").content.decode()
    assert "lake.orders" in page  # found through its s3 alias, shown by its display name


@pytest.mark.django_db
def test_dataset_page_links_both_directions(everything: None, super_client: Client) -> None:
    dataset = Dataset.objects.get(name="lake.orders")
    page = super_client.get(f"/admin/catalog/dataset/{dataset.pk}/change/").content.decode()
    upstream = Dataset.objects.get(name="shop.public.orders")
    downstream = Dataset.objects.get(name="orders_report")
    assert f"/admin/catalog/dataset/{upstream.pk}/change/" in page
    assert f"/admin/catalog/dataset/{downstream.pk}/change/" in page
    assert "etl/load_orders" in page  # producing run's job
    assert f"/admin/ingest/event/?dataset={dataset.pk}" in page
    # ... and back: the upstream dataset's page links down to this one.
    page = super_client.get(f"/admin/catalog/dataset/{upstream.pk}/change/").content.decode()
    assert f"/admin/catalog/dataset/{dataset.pk}/change/" in page


@pytest.mark.django_db
def test_event_page_links_to_run_job_and_datasets(everything: None, super_client: Client) -> None:
    event = Event.objects.filter(job_name="report").get()
    page = super_client.get(f"/admin/ingest/event/{event.pk}/change/").content.decode()
    run = Run.objects.get(job__name="report")
    assert f"/admin/catalog/run/{run.pk}/change/" in page
    assert f"/admin/catalog/job/{run.job_id}/change/" in page
    assert f"/admin/catalog/dataset/{Dataset.objects.get(name='orders_report').pk}/change/" in page
    assert "&quot;eventType&quot;: &quot;FAIL&quot;" in page  # pretty payload, escaped


@pytest.mark.django_db
def test_failed_derivation_shows_why(everything: None, super_client: Client) -> None:
    Event.objects.filter(job_name="report").update(
        derivation_status="failed", derivation_error="BadEvent: no dataset name"
    )
    page = super_client.get("/admin/ingest/event/?derivation_status__exact=failed")
    assert "BadEvent: no dataset name" in page.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("model", [Job, Run, Dataset, DatasetAlias, DatasetField, Event])
def test_hash_id_finds_exactly_that_row_in_every_searchable_admin(
    model: type, everything: None, super_client: Client
) -> None:
    wanted = model.objects.order_by("-id").first()
    meta = model._meta
    response = super_client.get(
        f"/admin/{meta.app_label}/{meta.model_name}/", {"q": f"#{wanted.pk}"}
    )
    assert [row.pk for row in response.context["cl"].result_list] == [wanted.pk]


@pytest.mark.django_db
def test_one_window_filter_on_received_and_started(everything: None, super_client: Client) -> None:
    def listed(url: str, **window: str) -> int:
        return len(super_client.get(url, window).context["cl"].result_list)

    # The fixture's events were received just now, about their runs started an hour ago.
    assert listed("/admin/ingest/event/", received_within="1h") == Event.objects.count() > 0
    assert listed("/admin/catalog/run/", started_within="24h") == Run.objects.count() > 0
    assert listed("/admin/catalog/run/", started_within="1h") == 0

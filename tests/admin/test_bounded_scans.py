"""The admin's lists over tables that grow with use read what they show, not the table
(ADR 0195): no filter asks for a column's distinct values of every row, a rare filter value
is a range of an index in the list's order, and a free-text search looks at the newest rows.

The tables are small here; with sequential and bitmap scans priced out
(``tests.plan_reads.rows_read``) PostgreSQL reads them as it would a store's, so a scan that
walks the table shows as its rows.
"""

import uuid
from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.admin.views.main import ChangeList
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from catalog.admin.events import LogEntryAdmin
from catalog.admin.labels import StewardLabelAdmin
from catalog.models import (
    Dataset,
    JobLineageEdge,
    StewardLabel,
    WebhookDelivery,
    WebhookSubscription,
)
from ingest.models import DeadLetter
from tests.api.factories import make_dataset, make_job, make_job_edge
from tests.plan_reads import rows_read

pytestmark = pytest.mark.django_db


def _changelist(client: Client, url: str) -> ChangeList:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.content[:300])
    return answer.context["cl"]


def _visit(client: Client, url: str, table: str) -> tuple[ChangeList, int]:
    """The page's change list, and the rows of ``table`` every statement the page sent read
    (its page, the paginator's capped count, its filters' choices)."""
    with CaptureQueriesContext(connection) as captured:
        changelist = _changelist(client, url)
    read = sum(
        sum(rows_read(query["sql"], table).values())
        for query in captured.captured_queries
        if query["sql"].startswith(("SELECT", "WITH")) and table in query["sql"]
    )
    return changelist, read


def test_no_list_asks_for_a_columns_distinct_values_of_its_table(super_client: Client) -> None:
    """Every registered admin's list (a page added later is covered): Django's field filter
    on a column without choices sends ``SELECT DISTINCT <column> FROM <table>`` on every
    visit, every row read. The dead letters' reason and topic, the deliveries' kind and the
    job edges' ``via`` did."""
    for model in admin.site._registry:
        page = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        with CaptureQueriesContext(connection) as captured:
            _changelist(super_client, page)
        distinct = [q["sql"] for q in captured.captured_queries if "SELECT DISTINCT" in q["sql"]]
        assert not distinct, (page, distinct)


TABLE = "ingest_dead_letter"


def _letters(count: int, reason_code: str, topic: str = "lineage", first: int = 0) -> None:
    DeadLetter.objects.bulk_create(
        DeadLetter(
            topic=topic,
            partition=0,
            offset=first + index,
            kind="openlineage",
            value=b"{",
            value_size=1,
            reason_code=reason_code,
            reason="bench",
        )
        for index in range(count)
    )


def test_a_rare_reason_codes_letters_are_read_alone_and_the_codes_offered(
    super_client: Client,
) -> None:
    """Three too-deep letters among 300: their page and its count read those three of the
    reason's index, where walking the letters newest first read all 303; the filter offers
    the codes and topics present; a code typed into the address that none has lists none."""
    _letters(3, "too-deep")
    _letters(300, "invalid-event", first=3)
    _letters(2, "invalid-json", topic="metadata-topic")
    url = "/admin/ingest/deadletter/"
    changelist, read = _visit(super_client, f"{url}?reason_code__exact=too-deep", TABLE)
    assert [letter.reason_code for letter in changelist.result_list] == ["too-deep"] * 3
    # The page and its count, three each; the choices, a probe a value and one past them.
    assert read <= 2 * 3 + 3 + 2 + 2, read
    offered = {
        spec.title: [c["display"] for c in spec.choices(changelist)]
        for spec in changelist.filter_specs
    }
    assert offered["reason code"] == ["All", "invalid-event", "invalid-json", "too-deep"]
    assert offered["topic"] == ["All", "lineage", "metadata-topic"]
    listed = _changelist(super_client, f"{url}?topic__exact=metadata-topic").result_list
    assert [letter.reason_code for letter in listed] == ["invalid-json"] * 2
    assert not _changelist(super_client, f"{url}?reason_code__exact=gone").result_list


def _deliveries(subscription: WebhookSubscription, count: int, **fields: object) -> None:
    start = timezone.now() - timedelta(days=1)
    WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            subscription=subscription,
            change_key=uuid.uuid4().bytes,
            kind=str(fields.get("kind", "edge_added")),
            payload={},
            status=str(fields.get("status", "delivered")),
            next_attempt_at=start,
        )
        for _ in range(count)
    )


def test_the_delivery_log_is_newest_first_by_when_each_was_written(super_client: Client) -> None:
    """A delivery's id is a random UUID: ``-id`` (ADR 0193) listed them in no order of
    time. Ids made here against their times' order, so that id order shows."""
    subscription = WebhookSubscription.objects.create(name="s", url="https://example.com/h")
    start = timezone.now() - timedelta(hours=1)
    for minute in range(5):
        WebhookDelivery.objects.create(
            id=uuid.UUID(int=minute + 1),
            subscription=subscription,
            change_key=bytes([minute]) * 32,
            kind="edge_added",
            payload={},
            next_attempt_at=start,
        )
        WebhookDelivery.objects.filter(id=uuid.UUID(int=minute + 1)).update(
            created_at=start - timedelta(minutes=minute)
        )
    newest_first = [uuid.UUID(int=minute + 1) for minute in range(5)]
    for url in (
        "/admin/catalog/webhookdelivery/",
        f"/admin/catalog/webhookdelivery/?subscription__id__exact={subscription.pk}",
    ):
        assert [row.pk for row in _changelist(super_client, url).result_list] == newest_first


def test_a_rare_deliveries_page_reads_them_alone(super_client: Client) -> None:
    """Two dead deliveries, two pings and a quiet subscription's two among 300: each page
    and its count read those of its index, where walking the log read all of it."""
    busy = WebhookSubscription.objects.create(name="busy", url="https://example.com/b")
    quiet = WebhookSubscription.objects.create(name="quiet", url="https://example.com/q")
    _deliveries(busy, 300)
    _deliveries(busy, 2, status="dead")
    _deliveries(busy, 2, kind="ping")
    _deliveries(quiet, 2)
    url = "/admin/catalog/webhookdelivery/"
    for query in ("status=dead", "kind__exact=ping", f"subscription__id__exact={quiet.pk}"):
        changelist, read = _visit(super_client, f"{url}?{query}", "catalog_webhook_delivery")
        assert len(changelist.result_list) == 2, query
        # The page and its count, two each; the kinds offered, a probe each and one past.
        assert read <= 2 * 2 + 2 + 1, (query, read)
    kinds = next(
        spec for spec in _changelist(super_client, url).filter_specs if spec.title == "kind"
    )
    assert [c["display"] for c in kinds.choices(_changelist(super_client, url))] == [
        "All",
        "edge_added",
        "ping",
    ]


def test_job_edges_named_only_in_column_lineage_are_read_alone(super_client: Client) -> None:
    job = make_job("j")
    datasets = [make_dataset(f"t{index}") for index in range(60)]
    for dataset in datasets:
        make_job_edge(job, dataset, "input", runs=[])
    JobLineageEdge.objects.filter(dataset=datasets[0]).update(via="column_lineage")
    url = "/admin/catalog/joblineageedge/"
    changelist, read = _visit(super_client, f"{url}?via__exact=column_lineage", "catalog_job_edge")
    assert [edge.dataset_id for edge in changelist.result_list] == [datasets[0].pk]
    assert read <= 2, read
    named = _changelist(super_client, f"{url}?via__exact=")
    assert len(named.result_list) == 50 and all(edge.via == "" for edge in named.result_list)
    assert Dataset.objects.count() == 60


def test_the_admin_logs_search_reads_the_newest_entries_and_says_so(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the newest 20 searched, of 100 entries: a recent entry is found as before, an
    older one is not, and the page and its count read at most those 20 (an icontains over
    every entry read all 100, twice). The search box says how many it searches; a rare
    action (a deletion) is read from its index alone."""
    monkeypatch.setattr(LogEntryAdmin, "searched_rows", 20)
    kind = ContentType.objects.get_for_model(Dataset)
    user = super_client.session["_auth_user_id"]
    LogEntry.objects.bulk_create(
        LogEntry(
            user_id=user,
            content_type=kind,
            object_id=str(index),
            object_repr=f"dataset {index}",
            action_flag=DELETION if index in (3, 97) else 2,
            change_message=f"changed owners of table{index:03}",
        )
        for index in range(100)
    )
    url = "/admin/admin/logentry/"
    recent, read = _visit(super_client, f"{url}?q=table095", "django_admin_log")
    assert [entry.object_repr for entry in recent.result_list] == ["dataset 95"]
    # The 20th newest found (20 index entries), then the page and its count, 20 each.
    assert read <= 3 * 20, read
    assert not _changelist(super_client, f"{url}?q=table005").result_list
    page = super_client.get(url).content.decode()
    assert "in the newest 10,000 entries" in page
    deletions, read = _visit(
        super_client, f"{url}?action_flag__exact={DELETION}", "django_admin_log"
    )
    assert [entry.object_repr for entry in deletions.result_list] == ["dataset 97", "dataset 3"]
    assert read <= 2 * 2, read


def test_steward_labels_list_newest_first_and_search_the_newest(
    super_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Marquez's tag endpoints write labels too, so the list is the bounded base's: newest
    first by id, its count the planner's or capped at 10,000, its search over the newest
    rows (here 5 of 30), where Django's counted and sorted every label by its holder and
    searched them all."""
    monkeypatch.setattr(StewardLabelAdmin, "searched_rows", 5)
    StewardLabel.objects.bulk_create(
        StewardLabel(
            target="dataset",
            namespace="s3://lake",
            name=f"table{index:02}",
            key_hash=bytes([index]) * 32,
            kind="tag",
            key=f"tier{index:02}",
        )
        for index in range(30)
    )
    url = "/admin/catalog/stewardlabel/"
    # No Sort of every label: test_address_orders.py checks the base's plans, this admin's too.
    listed = _changelist(super_client, url)
    assert [label.key for label in listed.result_list][:3] == ["tier29", "tier28", "tier27"]
    assert [row.key for row in _changelist(super_client, f"{url}?q=tier27").result_list] == [
        "tier27"
    ]
    assert not _changelist(super_client, f"{url}?q=tier02").result_list

"""A changelist's ``?o=`` typed into the address sorts only by the columns the admin offers
(ADR 0193).

Django hides the header link of a column outside ``sortable_by`` but still sorts by
``?o=<its index>``: ``/admin/ingest/event/?o=6`` sorted the whole event log by
``received_at``. Every page of every admin over a big table, each column both ways, is
checked against PostgreSQL's plan for its page: an index read in the page's order, never a
Sort of the table. The tables are nearly empty; with sorts and scans priced out the planner
still shows a Sort where no index gives the order, as it would at a million rows.
"""

import re
from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db import connection
from django.test import Client
from django.urls import reverse

from core.admin_base import BoundedAdmin
from ingest.models import Event
from tests.api.factories import make_event

pytestmark = pytest.mark.django_db

# The admins over tables people write row by row (tokens, rules, labels, tag descriptions,
# subscriptions, Django's users and groups): Django's ModelAdmin, every column sortable. A
# big table's admin is a BoundedAdmin (ADR 0040); this set fails when one is registered on
# plain ModelAdmin.
PEOPLES_TABLES = {
    "auth.group",
    "auth.user",
    "ingest.apitoken",
    "catalog.aliasrule",
    "catalog.tagdescription",
    "catalog.webhooksubscription",
}
WHOLE_SORT = re.compile(r"(?<!Incremental )Sort  \(cost")


def _changelist(client: Client, url: str) -> ChangeList:
    answer = client.get(url)
    assert answer.status_code == 200, (url, answer.content[:300])
    return answer.context["cl"]


def _page_plan(changelist: ChangeList) -> str:
    """PostgreSQL's plan for the statement that reads the list's first page, with every
    sort and scan an index could avoid priced out."""
    page = changelist.queryset[: changelist.list_per_page]
    sql, params = page.query.get_compiler(using=page.db).as_sql()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_every_big_tables_page_is_read_in_an_index_order_whatever_the_address_asks(
    super_client: Client,
) -> None:
    """Every ``BoundedAdmin`` from the registry (a page added later is covered), the
    address without ``o`` and with each column's index (the action checkbox's too)
    ascending and descending."""
    checked = 0
    for model, model_admin in admin.site._registry.items():
        label = model._meta.label_lower
        if not isinstance(model_admin, BoundedAdmin):
            assert label in PEOPLES_TABLES, f"{label}: a big table's admin is a BoundedAdmin"
            continue
        page = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        unordered = _changelist(super_client, page)  # its columns, and the first page checked
        columns = len(unordered.list_display)
        for order in ["", *(f"{sign}{index}" for index in range(columns) for sign in ("", "-"))]:
            url = f"{page}?o={order}" if order else page
            plan = _page_plan(_changelist(super_client, url) if order else unordered)
            assert not WHOLE_SORT.search(plan), (url, plan)
            checked += 1
    assert checked > 250


def test_an_unoffered_column_in_the_address_keeps_the_default_order(super_client: Client):
    """``received_at`` in ``?o=``, alone or before ``id``: the page lists newest id first as
    without it; the offered column, ``id``, still sorts both ways."""
    events = [make_event(run_id=f"r{index}") for index in range(3)]
    # Received in the reverse of their ids, so a sort by received_at would show.
    for offset, event in enumerate(events):
        received = events[0].received_at - timedelta(minutes=offset)
        Event.objects.filter(pk=event.pk).update(received_at=received)
    newest_first = [event.pk for event in reversed(events)]
    columns = _changelist(super_client, "/admin/ingest/event/").list_display
    received, by_id = columns.index("received_at"), columns.index("id")
    for order, expected in [
        (f"{received}", newest_first),
        (f"-{received}", newest_first),
        (f"{received}.{by_id}", newest_first[::-1]),
        (f"-{received}.-{by_id}", newest_first),
        (f"{by_id}", newest_first[::-1]),
        (f"-{by_id}", newest_first),
    ]:
        shown = _changelist(super_client, f"/admin/ingest/event/?o={order}").result_list
        assert [row.pk for row in shown] == expected, order

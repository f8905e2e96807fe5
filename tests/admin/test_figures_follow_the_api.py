"""The front page shows its figures to exactly whoever /api/v1/stats answers (issue 38,
item 10), both decided by catalog.reads.stats.may_read; and every row count shown is an
integer, however large the planner's estimate (issue 38, the 1e+30 finding)."""

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from catalog.reads import counting
from core.counts import MAX_COUNT
from tests.api.factories import make_dataset

pytestmark = pytest.mark.django_db


def _client(who: str, request: pytest.FixtureRequest) -> Client:
    client = Client()
    if who == "staff without permissions":
        client.force_login(User.objects.create_user("bare", password="pw", is_staff=True))
    elif who != "anonymous":
        client.force_login(request.getfixturevalue(who))
    return client


@pytest.mark.parametrize(
    ("who", "sees"),
    [
        ("anonymous", False),
        ("staff without permissions", False),
        ("reader", True),
        ("steward", True),
        ("superuser", True),
    ],
)
def test_the_front_page_shows_figures_to_whoever_the_stats_endpoint_answers(
    who: str, sees: bool, request: pytest.FixtureRequest
) -> None:
    client = _client(who, request)
    stats = client.get("/api/v1/stats")
    html = client.get("/").content.decode()
    assert (stats.status_code == 200) is sees, stats.status_code
    assert ('id="health"' in html) is sees
    assert ('id="health-hidden"' in html) is not sees
    if sees:
        jobs = re.search(r'id="jobs">(\d+)<', html)
        assert jobs is not None and int(jobs.group(1)) == stats.json()["estimated_rows"]["jobs"]


def _plant(table: str, rows: float) -> None:
    """The planner's statistics of ``table`` say ``rows`` rows on one page (undone with the
    test's transaction; the test database's user is a superuser)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_class SET reltuples = %s, relpages = 1 WHERE relname = %s", [rows, table]
        )


def test_a_huge_row_estimate_is_shown_as_an_integer_everywhere(
    superuser: User, read_client: Client
) -> None:
    _plant("catalog_job", 1e30)
    client = Client()
    client.force_login(superuser)

    stats = client.get("/api/v1/stats")
    assert stats.status_code == 200, stats.content[:300]
    assert b'"jobs":9223372036854775807' in stats.content  # an integer, clamped
    assert stats.json()["estimated_rows"]["jobs"] == MAX_COUNT

    front = client.get("/").content.decode()
    assert f'id="jobs">{MAX_COUNT}<' in front and "e+" not in front

    dashboard = client.get("/admin/").content.decode()
    assert f"<strong>{MAX_COUNT}</strong>jobs" in dashboard and "e+30" not in dashboard

    changelist = client.get("/admin/catalog/job/")
    assert changelist.status_code == 200 and b"e+30" not in changelist.content

    marquez = read_client.get("/marquez/api/v1/stats/jobs")
    assert marquez.status_code == 200
    assert all(type(bucket["count"]) is int for bucket in marquez.json())
    assert marquez.json()[-1]["count"] == MAX_COUNT


def test_a_huge_plan_estimate_is_an_integer_total_count(
    read_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mount's totalCount past its exact cap is the plan's row estimate, a float."""
    make_dataset("t1", namespace="huge")
    make_dataset("t2", namespace="huge")
    monkeypatch.setattr(counting, "EXACT_COUNT_CAP", 1)
    _plant("catalog_dataset", 1e30)
    response = read_client.get("/marquez/api/v1/namespaces/huge/datasets", {"limit": "1"})
    assert response.status_code == 200, response.content[:300]
    assert b'"totalCount":9223372036854775807' in response.content


@pytest.mark.parametrize(
    ("who", "sees"),
    [
        ("staff without permissions", False),
        ("staff who may view datasets only", False),
        ("reader", True),
        ("steward", True),
        ("superuser", True),
    ],
)
def test_the_admin_dashboard_shows_its_figures_to_whoever_the_stats_endpoint_answers(
    who: str, sees: bool, request: pytest.FixtureRequest, catalog: list[int]
) -> None:
    """docs/admin.md: a user given single permissions sees only what they allow. The admin
    index's dashboard shows the event log's figures (failed events with their job names and
    errors, the producers' URLs, the sizes of every table): the same rule as /api/v1/stats
    and the front page decides who sees them."""
    from django.contrib.auth.models import Permission

    from tests.admin.conftest import PRODUCER

    if who == "staff who may view datasets only":
        user = User.objects.create_user("datasets-only", password="pw", is_staff=True)
        user.user_permissions.add(Permission.objects.get(codename="view_dataset"))
        client = Client()
        client.force_login(user)
    else:
        client = _client(who, request)
    stats = client.get("/api/v1/stats")
    page = client.get("/admin/")
    assert page.status_code == 200
    html = page.content.decode()
    assert (stats.status_code == 200) is sees, stats.status_code
    assert ('id="lc-backlog"' in html) is sees
    assert (PRODUCER in html) is sees

"""Reads through a session need the view permissions of what they show (issue 27, item 10).

Before, any staff user, even one without a single catalog permission, read all of /api/v1
and the Marquez mount through the admin's session, and the admin's lineage picture showed
job names to a user who may not view jobs. Tested with the real steward and reader groups
(catalog/permissions.py, applied by catalog migration 0002) and users holding one
permission. Tokens are unchanged: a read token reads everything.
"""

from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.test import Client

from api.access import COLUMN_EDGE, DATASET, EDGE, EVENT, JOB, RUN, RUN_FACT, STATIC, STATIC_COLUMN
from api.marquez import paths
from catalog.models import Dataset, Job
from catalog.permissions import READERS, STEWARDS, apply_registry_permissions
from tests.marquez.conftest import S3, world_once  # noqa: F401  # a fixture
from tests.security.test_access_control import READ_PATHS
from tests.security.test_marquez_fuzz import MOUNT, _route_path

pytestmark = pytest.mark.django_db


@pytest.fixture
def groups() -> None:
    apply_registry_permissions()


@pytest.fixture
def world(world_once: None, db: None) -> None:  # noqa: F811
    """tests/marquez/conftest.py's world, written once for this module's tests (ADR 0210)."""


def _session(name: str, *, group: str | None = None, perms: tuple[str, ...] = ()) -> Client:
    user = User.objects.create_user(name, is_staff=True)
    if group:
        user.groups.add(Group.objects.get(name=group))
    for perm in perms:
        app_label, codename = perm.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    client = Client()
    client.force_login(user)
    return client


def _detail_paths() -> list[str]:
    job, dataset = Job.objects.first(), Dataset.objects.first()
    run = job.runs.first()
    return [
        f"/api/v1/jobs/{job.id}",
        f"/api/v1/datasets/{dataset.id}",
        f"/api/v1/runs/{run.run_uuid}",
    ]


def test_a_staff_user_without_permissions_reads_nothing(world, groups):
    bare = _session("bare")
    for path in [*READ_PATHS, *_detail_paths()]:
        response = bare.get(path)
        assert response.status_code == 403, (path, response.content[:200])
        assert response["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("group", [READERS, STEWARDS])
def test_readers_and_stewards_read_everything(world, groups, group):
    client = _session("member", group=group)
    for path in [*READ_PATHS, *_detail_paths()]:
        assert client.get(path).status_code not in (401, 403, 500), path


def test_each_list_needs_the_permission_of_what_it_shows(world, groups):
    datasets_only = _session("datasets", perms=("catalog.view_dataset",))
    assert datasets_only.get("/api/v1/datasets").status_code == 200
    for path in (
        "/api/v1/jobs",
        "/api/v1/runs",
        "/api/v1/events",
        "/api/v1/lineage/graph",
        "/api/v1/search?q=orders",
        "/api/v1/stats",
        "/api/v1/metadata",
    ):
        assert datasets_only.get(path).status_code == 403, path
    # The detail names the jobs around the dataset: it needs view_job too.
    dataset = Dataset.objects.first()
    assert datasets_only.get(f"/api/v1/datasets/{dataset.id}").status_code == 403
    events_only = _session("events", perms=("ingest.view_event",))
    assert events_only.get("/api/v1/events").status_code == 200
    assert events_only.get("/api/v1/events/export").status_code == 200
    assert events_only.get("/api/v1/datasets").status_code == 403


def test_static_lineage_and_run_facts_need_their_own_permissions(world, groups):
    """The graph shows jobs' declarations (static lineage) and the run and dataset details
    runs' facts about datasets (ADR 0061): the permissions that read them before do not."""
    before = (JOB, DATASET, EDGE, COLUMN_EDGE, RUN, EVENT)
    window = "from=2020-01-01T00:00:00Z&to=2030-01-01T00:00:00Z"
    dataset, run = Dataset.objects.first(), Job.objects.first().runs.first()
    paths = {
        f"/api/v1/lineage/graph?node=dataset:{dataset.id}": (STATIC, STATIC_COLUMN),
        f"/api/v1/lineage/diff?node=dataset:{dataset.id}&{window}": (STATIC,),
        f"/api/v1/runs/{run.run_uuid}": (RUN_FACT,),
        f"/api/v1/datasets/{dataset.id}": (RUN_FACT,),
    }
    for number, (path, needed) in enumerate(paths.items()):
        without = _session(f"without{number}", perms=before)
        assert without.get(path).status_code == 403, path
        with_them = _session(f"with{number}", perms=(*before, *needed))
        assert with_them.get(path).status_code == 200, path
    assert _marquez(_session("mz", perms=before), "lineage").status_code == 403
    assert _marquez(_session("mz2", perms=(*before, STATIC)), "lineage").status_code == 200


def test_a_read_token_still_reads_everything(world, read_client):
    for path in [*READ_PATHS, *_detail_paths()]:
        assert read_client.get(path).status_code not in (401, 403, 500), path


# --- the Marquez mount ------------------------------------------------------------------------


def _marquez(client: Client, pattern: str) -> Any:
    raw = MOUNT + _route_path(pattern, {})
    params = {"nodeId": f"dataset:{S3}:raw/orders/daily", "q": "orders"}
    return client.get(raw, params, RAW_URI=raw)


READS = [(route.pattern, route.name) for route in paths.ROUTES if route.read is not None]


def test_the_mount_needs_the_same_permissions(world, groups):
    bare = _session("bare")
    reader = _session("reader", group=READERS)
    for pattern, handler in READS:
        expected_bare = 403 if paths.ENDPOINTS[handler].needs else None
        response = _marquez(bare, pattern)
        if expected_bare:
            assert response.status_code == 403, (pattern, response.content[:200])
            assert set(response.json()) == {"code", "message", "details"}
        answered = _marquez(reader, pattern)
        assert answered.status_code not in (401, 403, 500), (pattern, answered.content[:200])
    datasets_only = _session(
        "datasets", perms=("catalog.view_dataset", "catalog.view_job", "catalog.view_run")
    )
    assert _marquez(datasets_only, "namespaces/{namespace}/datasets").status_code == 200
    assert _marquez(datasets_only, "events/lineage").status_code == 403


# --- the admin's picture ---------------------------------------------------------------------


def test_the_picture_shows_no_job_to_a_user_who_may_not_view_jobs(world, groups):
    dataset = Dataset.objects.get(aliases__name="raw/orders/daily")
    url = f"/admin/catalog/dataset/{dataset.id}/change/"
    steward_page = _session("steward", group=STEWARDS).get(url).content.decode()
    assert "etl.load_orders" in steward_page and 'id="lineage-picture-hidden"' not in steward_page
    viewer = _session("viewer", perms=("catalog.view_dataset",))
    response = viewer.get(url)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="lineage-picture-hidden"' in page
    assert "etl.load_orders" not in page and "report.build" not in page


def test_a_job_filter_on_the_dataset_list_needs_the_job_permission(world) -> None:
    """Which datasets a job reads and writes is job lineage: a session that may view
    datasets but not jobs lists datasets, and is refused the list filtered by a job."""
    job = Job.objects.first()
    datasets_only = _session("datasets-only", perms=(DATASET,))
    assert datasets_only.get("/api/v1/datasets").status_code == 200
    for name in ("job_id", "producer_job_id", "consumer_job_id"):
        refused = datasets_only.get("/api/v1/datasets", {name: job.id})
        assert refused.status_code == 403, name
        assert refused["Content-Type"] == "application/problem+json"
    with_jobs = _session("datasets-and-jobs", perms=(DATASET, JOB))
    answer = with_jobs.get("/api/v1/datasets", {"job_id": job.id})
    assert answer.status_code == 200 and answer.json()["results"]

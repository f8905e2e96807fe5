"""Auth, the switches, Marquez's error bodies, paging bounds and pinned query counts."""

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings

from api.marquez import paging
from catalog.reads import counting
from tests.api.factories import make_dataset, make_job, make_run
from tests.marquez.conftest import JOB_NS, S3, MarquezClient

pytestmark = pytest.mark.django_db

ERROR = {"code", "message", "details"}


def marquez(**overrides: Any) -> Any:
    values = {"ENABLED": True, "HOSTS": [], "ALLOW_ANONYMOUS_READS": False, **overrides}
    return override_settings(MARQUEZ_API=values)


def test_no_credentials_is_401_in_marquez_shape():
    response = MarquezClient(Client()).get("/namespaces")
    assert response.status_code == 401
    assert set(response.json()) == ERROR and response.json()["code"] == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_an_ingest_token_cannot_read(ingest_client):
    response = MarquezClient(ingest_client).get("/tags")
    assert response.status_code == 403 and response.json()["code"] == 403


def test_a_staff_session_reads():
    client = Client()
    steward = User.objects.create_user("steward", is_staff=True)
    client.force_login(steward)
    assert MarquezClient(client).get("/sources").json() == {"sources": []}
    # Namespaces and tags name jobs and datasets: a session needs both view permissions.
    assert MarquezClient(client).get("/namespaces").status_code == 403
    assert MarquezClient(client).get("/tags").status_code == 403
    steward.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_job", "view_dataset"])
    )
    assert MarquezClient(Client()).get("/namespaces").status_code == 401
    client.force_login(User.objects.get(pk=steward.pk))
    assert MarquezClient(client).get("/namespaces").status_code == 200
    assert MarquezClient(client).get("/tags").json() == {"tags": []}
    other = Client()
    other.force_login(User.objects.create_user("visitor", is_staff=False))
    assert MarquezClient(other).get("/tags").status_code == 403


def test_anonymous_reads_only_when_switched_on():
    with marquez(ALLOW_ANONYMOUS_READS=True):
        assert MarquezClient(Client()).get("/tags").status_code == 200
    assert MarquezClient(Client()).get("/tags").status_code == 401


def _throttled(rate: str = "2/min", **rest: Any) -> Any:
    from django.conf import settings

    return override_settings(
        REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"read": rate}, **rest}
    )


@pytest.fixture
def fresh_throttle() -> Any:
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def test_anonymous_reads_are_throttled_per_address(fresh_throttle):
    with marquez(ALLOW_ANONYMOUS_READS=True), _throttled():
        anonymous = MarquezClient(Client(REMOTE_ADDR="10.0.0.7"))
        assert [anonymous.get("/tags").status_code for _ in range(3)] == [200, 200, 429]
        assert anonymous.get("/tags").json()["code"] == 429
        assert MarquezClient(Client(REMOTE_ADDR="10.0.0.8")).get("/tags").status_code == 200


def test_a_made_up_forwarded_for_is_no_fresh_allowance(fresh_throttle):
    """By default (no trusted proxy) X-Forwarded-For is ignored: a new made-up address on
    every request is still the one client REMOTE_ADDR says."""
    with marquez(ALLOW_ANONYMOUS_READS=True), _throttled():
        statuses = [
            Client(REMOTE_ADDR="10.0.0.7", HTTP_X_FORWARDED_FOR=f"198.51.100.{index}")
            .get("/marquez/api/v1/tags")
            .status_code
            for index in range(4)
        ]
    assert statuses == [200, 200, 429, 429]


def test_behind_one_trusted_proxy_the_address_it_saw_is_counted(fresh_throttle):
    """NUM_PROXIES=1 (one ingress appends the address it saw): that last entry is the
    client; whatever the client wrote before it changes nothing."""

    def read(seen: str, forged: str) -> int:
        proxy = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"{forged}, {seen}")
        return proxy.get("/marquez/api/v1/tags").status_code

    with marquez(ALLOW_ANONYMOUS_READS=True), _throttled(NUM_PROXIES=1):
        first = [read("203.0.113.5", f"198.51.100.{index}") for index in range(3)]
        other = read("203.0.113.6", "198.51.100.9")
    assert first == [200, 200, 429] and other == 200


@pytest.mark.parametrize("prefix", ["/api/v1", "/marquez/api/v1"])
def test_anonymous_reads_open_only_on_the_named_hosts(read_client, prefix):
    with marquez(ALLOW_ANONYMOUS_READS=True, HOSTS=["marquez.internal"]):
        on_host = Client().get(f"{prefix}/tags", HTTP_HOST="MARQUEZ.internal:5000")
        assert on_host.status_code == 200 and on_host.json() == {"tags": []}
        for host in ("catalog.example.com", "localhost", "marquez.internal.evil.example"):
            refused = Client().get("/marquez/api/v1/tags", HTTP_HOST=host)
            assert refused.status_code == 401, (host, refused.content)
            # A token still reads on any host.
            assert read_client.get("/marquez/api/v1/tags", HTTP_HOST=host).status_code == 200
    with marquez(ALLOW_ANONYMOUS_READS=False, HOSTS=["marquez.internal"]):
        assert Client().get(f"{prefix}/tags", HTTP_HOST="marquez.internal").status_code == 401


def test_with_no_hosts_named_anonymous_reads_open_on_every_host():
    with marquez(ALLOW_ANONYMOUS_READS=True):
        response = Client().get("/marquez/api/v1/tags", HTTP_HOST="catalog.example.com")
    assert response.status_code == 200


def test_the_mount_can_be_switched_off(mz):
    with marquez(ENABLED=False):
        response = mz.get("/tags")
    assert response.status_code == 404 and set(response.json()) == ERROR


def test_unknown_paths_and_writes(read_client, mz):
    missing = mz.get("/no/such/thing")
    assert missing.status_code == 404 and set(missing.json()) == ERROR
    for method, path in [
        ("put", "/marquez/api/v1/namespaces/ns"),
        ("post", "/marquez/api/v1/jobs/runs/01930000-0000-7000-8000-000000000001/complete"),
    ]:
        response = getattr(read_client, method)(path, RAW_URI=path)
        assert response.status_code == 405, (method, path)
        assert response.json()["code"] == 405 and "read-only" in response.json()["message"]
    # Tag calls are curation (tests/marquez/test_tag_writes.py, test_tag_descriptions.py):
    # a read token may not.
    for method, path in [
        ("put", "/marquez/api/v1/tags/PII"),
        ("post", "/marquez/api/v1/namespaces/ns/datasets/ds/tags/PII"),
        ("delete", "/marquez/api/v1/namespaces/ns/jobs/job/tags/PII"),
    ]:
        response = getattr(read_client, method)(path, RAW_URI=path)
        assert response.status_code == 403 and response.json()["code"] == 403, (method, path)


def test_a_proxy_that_decoded_the_path_still_routes(world, read_client):
    path = "/marquez/api/v1/namespaces/s3://lake/datasets/raw/orders/daily/versions"
    response = read_client.get(path, RAW_URI=path)
    assert response.status_code == 200 and response.json()["totalCount"] == 1


def test_post_lineage_is_our_ingest(client):
    response = client.post("/marquez/api/v1/lineage", {}, content_type="application/json")
    assert response.status_code == 401  # ingest's own answer: an ingest token is required
    assert response["Content-Type"] == "application/problem+json"


def test_bad_parameters_are_400_in_marquez_shape(mz):
    for path, params in [
        ("/namespaces", {"limit": "many"}),
        ("/namespaces", {"offset": "-1"}),
        ("/namespaces", {"offset": str(paging.MAX_OFFSET + 1)}),
        ("/lineage", {}),
        ("/lineage", {"nodeId": "table:x:y"}),
        ("/column-lineage", {"nodeId": "dataset:a:b", "withDownstream": "maybe"}),
        ("/jobs", {"lastRunStates": "SLEEPING"}),
        ("/events/lineage", {"before": "yesterday"}),
        ("/events/lineage", {"sortDirection": "sideways"}),
        ("/jobs/runs/01930000-0000-7000-8000-000000000001/facets", {"type": "dataset"}),
    ]:
        response = mz.get(path, **params)
        assert response.status_code == 400, (path, params, response.content)
        assert set(response.json()) == ERROR and response.json()["message"]


def test_unknown_nodes_are_404(mz):
    assert mz.get("/lineage", nodeId="dataset:nowhere:nothing").status_code == 404
    assert mz.get("/column-lineage", nodeId="job:nowhere:nothing").status_code == 404


def test_limit_is_clamped_and_offset_pages(mz):
    for index in range(3):
        make_job(f"job_{index}", namespace="paged")
    body = mz.get("/namespaces/paged/jobs", limit="100000").json()
    assert len(body["jobs"]) == 3
    second = mz.get("/namespaces/paged/jobs", limit="1", offset="1").json()
    assert [j["name"] for j in second["jobs"]] == ["job_1"] and second["totalCount"] == 3


def test_limit_is_capped_at_500(mz):
    """docs/marquez.md: ``limit`` is 0 or more, and more than 500 is served 500, on every
    list (a negative one is a 400: tests/marquez/test_marquez_bounds.py)."""
    for index in range(paging.MAX_LIMIT + 1):
        make_job(f"job_{index:03}", namespace="many")
    cases = [("0", 0), ("1", 1), ("500", 500), ("501", 500), (str(10**30), 500)]
    for limit, served in cases:
        body = mz.get("/namespaces/many/jobs", limit=limit).json()
        assert len(body["jobs"]) == served, limit
        assert body["totalCount"] == paging.MAX_LIMIT + 1


OFFSET_LISTS = [
    "/namespaces",
    "/jobs",
    f"/namespaces/{JOB_NS}/jobs",
    f"/namespaces/{JOB_NS}/jobs/etl.load_orders/runs",
    "/namespaces/s3%3A%2F%2Flake/datasets",
    "/namespaces/s3%3A%2F%2Flake/datasets/raw%2Forders%2Fdaily/versions",
    "/search",
    "/tags",
    "/events/lineage",
    f"/events/{JOB_NS}",
]


@pytest.mark.parametrize("path", OFFSET_LISTS)
def test_every_offset_list_refuses_deep_and_negative_offsets(world, mz, path):
    """docs/marquez.md: ``offset`` above 10,000 is a 400, on every list the mount pages
    (each reads its own rows: jobs, runs, datasets, versions, search, tags, raw events)."""
    for offset in (str(paging.MAX_OFFSET + 1), str(10**30), "-1"):
        response = mz.get(path, offset=offset, q="orders")
        assert response.status_code == 400, (path, offset, response.content)
        assert set(response.json()) == ERROR
    assert mz.get(path, offset=str(paging.MAX_OFFSET), q="orders").status_code == 200


def test_total_count_is_estimated_above_the_bound(mz, monkeypatch):
    for index in range(5):
        make_dataset(f"t{index}", namespace="big")
    monkeypatch.setattr(counting, "EXACT_COUNT_CAP", 2)
    body = mz.get("/namespaces/big/datasets", limit="1").json()
    # Past the bound the planner's estimate answers (never below the bound + 1).
    assert body["totalCount"] >= 3 and len(body["datasets"]) == 1


def _queries(mz: MarquezClient, path: str, **params: str) -> int:
    """Queries of the view's work (the timeout's SET LOCAL and savepoints not counted)."""
    with CaptureQueriesContext(connection) as captured:
        assert mz.get(path, **params).status_code == 200
    bookkeeping = ("SAVEPOINT", "RELEASE SAVEPOINT", "SET LOCAL")
    return sum(1 for query in captured if not query["sql"].startswith(bookkeeping))


def test_query_counts_do_not_grow_with_the_page(mz):
    """The page's ids and its total, then its rows in two chunks (one row, then up to
    paging.MAX_CHUNK more: the page is read a chunk at a time so that it never holds a
    whole page of facets), each chunk read and shaped in the same few queries (a job's
    latest runs with its inputs and outputs one, a dataset's fields with its newest write
    one: ADR 0116)."""

    def grow(count: int) -> None:
        for _ in range(count):
            job = make_job(namespace="counted")
            make_run(job)
            make_run(job, state="FAIL")
            make_dataset(namespace="counted")

    grow(2)
    mz.get("/tags")  # token resolved and cached: the counts below are the views'
    small = {
        "jobs": _queries(mz, "/namespaces/counted/jobs"),
        "datasets": _queries(mz, "/namespaces/counted/datasets"),
        "namespaces": _queries(mz, "/namespaces"),
    }
    grow(6)
    large = {
        "jobs": _queries(mz, "/namespaces/counted/jobs"),
        "datasets": _queries(mz, "/namespaces/counted/datasets"),
        "namespaces": _queries(mz, "/namespaces"),
    }
    assert small == large == {"jobs": 2 + 2 * 2, "datasets": 2 + 2 * 3, "namespaces": 1}


def test_graph_query_counts_are_pinned(world, mz):
    """A fixed handful per graph: the walk (catalog.lineage.graph, with its job edges: ADR 0027; its
    root found by its name and checked by the walk, its nodes' columns in one statement:
    catalog.lineage.drawn; the rows Marquez shows in one more, ADR 0118) plus three for
    Marquez's shapes (a job's latest run with its inputs and outputs one, a dataset's fields
    with its newest write one, its column lineage one: ADR 0116), one for the drawn jobs'
    every input and output (Marquez draws them all); which edges are current (ADR 0060) is
    read with the job edges (ADR 0104, one query fewer); column lineage: one query per
    level walked (at most MAX_DEPTH per direction) and one for which walked datasets are
    temporary (folded away, ADR 0089). Static lineage (ADR 0061) adds three to a
    walk (declared pairs, declaring jobs, drawn declarations) and a job root's declared
    datasets, one per direction, only on a store that declares something: the root's
    statement reads whether it does, and whether anything is retired (ADR 0116; this
    world does neither); a job root reads its child jobs, one (ADR 0070). Both
    directions of the walk are one statement (ADR 0099), and a job root's first hop is
    read by it (ADR 0133: 15 before). A dataset root by its name is one statement with the
    alias rules (ADR 0134; two before it), a job root by its key one."""
    mz.get("/tags")
    assert _queries(mz, "/lineage", nodeId=f"dataset:{S3}:raw/orders/daily") == 12
    assert _queries(mz, "/lineage", nodeId=f"job:{JOB_NS}:etl.load_orders") == 13
    assert _queries(mz, "/column-lineage", nodeId=f"dataset:{S3}:raw/orders/daily") == 9


@pytest.mark.parametrize(
    "node", [f"dataset:{S3}:raw/orders/daily", f"job:{JOB_NS}:etl.load_orders"]
)
def test_lineage_reads_each_row_once(world, mz, node):
    """The root found by its name (its id only), the walk's own columns of its nodes in its
    one statement, and every drawn node's row once, in one statement
    (``catalog.reads.marquez_graph.node_rows``, ADR 0118): as many rows as nodes drawn, of
    each kind, none twice; no model instance of a dataset or a job is read."""
    mz.get("/tags")
    sent: list[tuple[str, Any]] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # The statement and its values: node_rows is prepared (ADR 0134), its ids not in its text.
        sent.append((sql, params))
        return execute(sql, params, many, context)

    with CaptureQueriesContext(connection) as captured, connection.execute_wrapper(record):
        response = mz.get("/lineage", nodeId=node)
    types = [item["type"] for item in response.json()["graph"]]
    statements = [query["sql"] for query in captured]
    (values,) = [
        params for sql, params in sent if "SELECT p.namespace, p.name FROM catalog_job p" in sql
    ]
    datasets, jobs = (
        [int(n) for n in values[kind].strip("{}").split(",") if n] for kind in ("datasets", "jobs")
    )
    assert len(datasets) == types.count("DATASET") and len(set(datasets)) == len(datasets)
    assert len(jobs) == types.count("JOB") and len(set(jobs)) == len(jobs)
    for table in ("catalog_dataset", "catalog_job"):
        whole = f'SELECT "{table}"."id", "{table}"."namespace"'
        assert not [sql for sql in statements if sql.startswith(whole)], table


@pytest.mark.parametrize("host", ["marquez.example.com", "MARQUEZ.example.com:8000"])
def test_marquez_hosts_get_the_mount_at_plain_api_v1(world, read_client, host):
    with marquez(HOSTS=["marquez.example.com"]):
        body = read_client.get("/api/v1/namespaces", HTTP_HOST=host).json()
        assert "namespaces" in body and body["totalCount"] == 3
        graph = read_client.get(
            "/api/v1/lineage", {"nodeId": f"job:{JOB_NS}:etl.load_orders"}, HTTP_HOST=host
        )
        assert graph.status_code == 200 and "graph" in graph.json()
        # Paths Marquez does not have stay the catalog's own.
        stats = read_client.get("/api/v1/stats", HTTP_HOST=host)
        assert stats.status_code == 200 and "code" not in stats.json()
        # Other hosts keep the catalog's /api/v1/.
        ours = read_client.get("/api/v1/namespaces", HTTP_HOST="catalog.example.com").json()
        assert "results" in ours


def test_a_slow_read_is_cut_with_503(mz, monkeypatch, settings):
    from api.marquez import paths

    def slow(request: Any) -> dict[str, Any]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(2)")
        return {"tags": []}

    monkeypatch.setitem(paths.READS, "tags", slow)
    settings.LINEAGE = {**settings.LINEAGE, "READ_STATEMENT_TIMEOUT_MS": 100}
    response = mz.get("/tags")
    assert response.status_code == 503 and response.json()["code"] == 503
    assert response["Retry-After"] == "5"
    assert mz.get("/sources").status_code == 200  # the connection is usable afterwards

"""The mount's ``/lineage`` finds its root by name in one statement (ADR 0134): the dataset
alias under the name's key with no rule applied, and the enabled alias rules; only a rule
that rewrites the name costs a second read. Whatever the rules, ``marquez_graph.root_id``
finds what ``find_dataset`` and ``find_job`` find (the reads every other lookup by name uses).
"""

from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import AliasRule, Dataset
from catalog.reads import marquez_graph
from catalog.reads.datasets import find_dataset
from catalog.reads.jobs import find_job
from tests.api.factories import add_alias, make_dataset, make_job

pytestmark = pytest.mark.django_db

# (namespace, name) asked for: stored names, an alias, another spelling of a namespace,
# names only a rule finds, and names nothing has.
NAMES = [
    ("postgres://db:5432", "shop.public.orders"),
    ("postgres://db:5432", "shop.public.orders_old"),
    ("s3://lake", "raw/orders"),
    ("s3a://lake/", "raw/orders"),
    ("s3://old-lake", "raw/orders"),
    ("s3://old-lake", "old/orders"),
    ("postgres://db:5432", "shop.public.none"),
    ("s3://old-lake", "nothing/here"),
]


@pytest.fixture(params=[True, False], ids=["server-binding", "django-cursor"])
def prepare_reads(request: pytest.FixtureRequest, settings: object) -> Iterator[None]:
    # Both kinds of cursor read_rows can give: the rules' text must read the same through each.
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": request.param}  # type: ignore[attr-defined]
    yield


@pytest.fixture
def store() -> dict[str, Dataset]:
    orders = make_dataset("shop.public.orders")
    add_alias(orders, "postgres://db:5432", "shop.public.orders_old")
    raw = make_dataset("raw/orders", namespace="s3://lake")
    make_job("load_orders", namespace="airflow")
    return {"orders": orders, "raw": raw}


def _rewrite(slug: str, priority: int, namespace: str, pattern: str, target: str, name: str):
    return AliasRule.objects.create(
        slug=slug,
        action="rewrite",
        namespace=namespace,
        name_pattern=pattern,
        target_namespace=target,
        target_name=name,
        priority=priority,
    )


def _found(namespace: str, name: str) -> tuple[int | None, int]:
    with CaptureQueriesContext(connection) as queries:
        found = marquez_graph.root_id("dataset", namespace, name)
    return found, len(queries)


def _expected(namespace: str, name: str) -> int | None:
    dataset = find_dataset(namespace, name)
    return None if dataset is None else dataset.id


def test_without_rules_one_statement_finds_what_find_dataset_finds(prepare_reads, store):
    for namespace, name in NAMES:
        assert _found(namespace, name) == (_expected(namespace, name), 1), (namespace, name)
    assert _found("postgres://db:5432", "shop.public.orders_old")[0] == store["orders"].id


def test_rules_are_applied_as_find_dataset_applies_them(prepare_reads, store):
    # Applied in priority order: old/x -> legacy/x (first), then the old lake -> the lake.
    _rewrite("lake", 20, "s3://old-lake", "(.*)", "s3://lake", "\\1")
    _rewrite("legacy", 10, "s3://old-lake", "old/(.*)", "s3://old-lake", "raw/\\1")
    disabled = _rewrite("off", 5, "s3://lake", "raw/(.*)", "s3://lake", "gone/\\1")
    AliasRule.objects.filter(id=disabled.id).update(enabled=False)
    for namespace, name in NAMES:
        found, statements = _found(namespace, name)
        assert found == _expected(namespace, name), (namespace, name)
        # A second read only when a rule rewrote the name: never more than the ORM's two.
        assert statements == (2 if namespace == "s3://old-lake" else 1), (namespace, name)
    assert _found("s3://old-lake", "old/orders")[0] == store["raw"].id


def test_a_rule_that_does_not_compile_is_skipped_as_find_dataset_skips_it(prepare_reads, store):
    broken = _rewrite("broken", 1, "s3://old-lake", "(.*)", "s3://nowhere", "\\1")
    AliasRule.objects.filter(id=broken.id).update(name_pattern="(unclosed")
    _rewrite("lake", 20, "s3://old-lake", "(.*)", "s3://lake", "\\1")
    assert (
        _found("s3://old-lake", "raw/orders")[0]
        == store["raw"].id
        == (_expected("s3://old-lake", "raw/orders"))
    )


def test_a_job_by_its_key_in_one_statement(prepare_reads, store):
    job = find_job("airflow", "load_orders")
    assert job is not None
    for namespace, name, expected in [
        ("airflow", "load_orders", job.id),
        ("airflow", "nothing", None),
        ("other", "load_orders", None),
    ]:
        with CaptureQueriesContext(connection) as queries:
            assert marquez_graph.root_id("job", namespace, name) == expected
        assert len(queries) == 1

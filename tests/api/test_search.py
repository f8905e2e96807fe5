"""/search: names, aliases, namespaces, descriptions, columns; ranked; typos still match."""

import pytest
from django.db import connection

from bench import bare_reads
from catalog.models import Dataset
from catalog.reads.search import MAX_QUERY_LENGTH, search_catalog
from catalog.services import retirement
from catalog.services.retirement import Actor
from tests.api.conftest import results
from tests.api.factories import add_alias, add_fields, make_dataset, make_job
from tests.api.project_fixtures import derive, fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    customers = make_dataset("shop.public.customers", description="People who bought something")
    orders = make_dataset("shop.public.orders")
    add_alias(orders, "hive://meta:9083", "legacy.sales_orders")
    add_fields(orders, "order_id", "shipping_address")
    job = make_job("nightly.customer_rollup", description="Aggregates revenue per segment")
    make_dataset("marketing.campaigns", namespace="snowflake://acme")
    return {"customers": customers, "orders": orders, "job": job}


def hits(api, query):
    return results(api.get(f"/api/v1/search?q={query}"))


def test_exact_name_ranks_first(api, catalog):
    found = hits(api, "customers")
    assert (found[0]["type"], found[0]["id"]) == ("dataset", catalog["customers"].id)
    assert found[0]["score"] >= found[-1]["score"]


def test_typo_still_finds_the_table(api, catalog):
    found = hits(api, "custmers")
    assert found[0]["id"] == catalog["customers"].id


def test_alias_column_description_namespace_and_job(api, catalog):
    assert hits(api, "sales_orders")[0]["id"] == catalog["orders"].id
    column = hits(api, "shipping_address")[0]
    assert (column["id"], column["matched_field"]) == (catalog["orders"].id, "column")
    assert hits(api, "bought")[0]["id"] == catalog["customers"].id
    assert hits(api, "snowflake")[0]["name"] == "marketing.campaigns"
    job = hits(api, "rollup")[0]
    assert (job["type"], job["id"]) == ("job", catalog["job"].id)
    assert hits(api, "revenue segment")[0]["type"] == "job"


def test_type_filter_and_pagination(api, catalog):
    assert {hit["type"] for hit in hits(api, "customer&type=job")} == {"job"}
    first = api.get("/api/v1/search?q=shop&limit=1").json()
    assert len(first["results"]) == 1 and first["next"]
    second = api.get(first["next"]).json()
    assert second["results"][0]["id"] != first["results"][0]["id"]
    assert second["previous"]


@pytest.mark.parametrize(
    "query",
    ["", "q=", "q=x&limit=0", "q=x&offset=5000", "q=x&type=y", "q=" + "x" * (MAX_QUERY_LENGTH + 1)],
)
def test_bad_search_is_400(api, query):
    assert api.get(f"/api/v1/search?{query}").status_code == 400


def test_a_query_at_the_length_limit_is_answered(api):
    # The view refuses a longer one (MAX_QUERY_LENGTH): every search's cost is bounded by it.
    assert api.get(f"/api/v1/search?q={'x' * MAX_QUERY_LENGTH}").status_code == 200


def test_search_queries(api, catalog, django_assert_num_queries):
    # One round trip: the SET LOCALs and the ranked query in one simple-protocol query, one
    # implicit transaction (ADR 0111); it was four (BEGIN, the threshold, the query, COMMIT).
    with django_assert_num_queries(1):
        hits(api, "orders")


@pytest.mark.parametrize("query", ["%25", "'", "!!", "a:*|b", "%E2%9C%93"])
def test_punctuation_only_queries_are_answered(api, catalog, query):
    assert api.get(f"/api/v1/search?q={query}").status_code == 200


def test_a_table_some_run_wrote_ranks_above_a_name_only_column_lineage_holds(api):
    # The Spark event's column lineage names "paid", a CTE of its SQL, in the Hive
    # namespace; a Hive job really wrote s3://lake/paid (tests/fixtures/openlineage/project).
    derive(fixture("spark_cte_column_lineage"), fixture("hive_paid_table"))
    phantom = Dataset.objects.for_alias("hive://metastore:9083", "paid").get()
    real = Dataset.objects.for_alias("s3://lake", "paid").get()
    found = [hit["id"] for hit in hits(api, "paid") if hit["type"] == "dataset"]
    assert found.index(real.id) < found.index(phantom.id)


@pytest.mark.django_db(transaction=True)
def test_the_search_settings_end_with_its_statement():
    # The threshold, jit and the operator cost are SET LOCAL in the search's own round
    # trip: outside a transaction they end with it, not staying on the connection (ADR 0111).
    make_dataset("shop.public.customers")
    with connection.cursor() as cursor:
        cursor.execute("SET pg_trgm.word_similarity_threshold = 0.6")
        assert [hit.name for hit in search_catalog("custmers", 5)] == ["shop.public.customers"]
        cursor.execute(
            "SELECT current_setting('pg_trgm.word_similarity_threshold'), "
            "current_setting('jit'), current_setting('cpu_operator_cost')"
        )
        assert cursor.fetchone() == ("0.6", "on", "0.0025")


def test_a_names_similarity_never_exceeds_its_word_similarity():
    # The score is word_similarity alone (ADR 0111): it was the greater of the two, which is
    # always word_similarity; were pg_trgm to change that, scores would change here first.
    names = ["shop.public.customers", "legacy.sales_orders", "s3://lake/paid", "a", "x y z"]
    names += [f"schema_{i % 7}.table_{i}" for i in range(1, 400, 13)]
    queries = ["customers", "custmers", "table_1", "tabel_12", "s3://lake", "a", "zz", "ordrs x"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE similarity(q, n) > word_similarity(q, n)) "
            "FROM unnest(%s::text[]) AS q, unnest(%s::text[]) AS n",
            [queries, names],
        )
        assert cursor.fetchone() == (len(queries) * len(names), 0)


def test_a_job_hit_is_named_by_the_row_that_matched(api, catalog):
    # Job hits carry the namespace and name their branch read (ADR 0122): the statement no
    # longer joins the job table to name them, and a retired job is still hidden.
    tagged = make_job("dag_7.load", namespace="prod", tags=[{"key": "pii", "hidden": False}])
    owned = make_job("dag_8.load", owners=[{"name": "data-team", "hidden": False}])
    named = {(hit["matched_field"], hit["namespace"], hit["name"]) for hit in hits(api, "pii")}
    assert ("tag", "prod", "dag_7.load") in named
    assert hits(api, "data-team")[0]["name"] == owned.name
    assert hits(api, "rollup")[0]["name"] == "nightly.customer_rollup"
    retirement.retire(tagged, Actor("token:ci"), "switched off")
    assert all(hit["id"] != tagged.id for hit in hits(api, "pii") if hit["type"] == "job")


@pytest.mark.parametrize(
    "query",
    [
        "customers",
        "custmers",
        "sales_orders",
        "shipping_address",
        "bought",
        "rollup",
        "revenue segment",
        "snowflake",
        "shop",
        "pii",
        "data-team",
        "zz",
    ],
)
def test_the_bare_search_answers_what_search_answers(catalog, query):
    # bench/bare_reads.py's BARE_SEARCH is search's bare equivalent (issue 42): the same
    # hits, names, order and scores, with no retirement or phantom on the store (ADR 0122).
    make_job("dag_7.load", tags=[{"key": "pii", "hidden": False}])
    make_job("dag_8.load", owners=[{"name": "data-team", "hidden": False}])
    served = [
        (h.type, h.id, h.matched_field, h.matched_value, h.score, h.namespace, h.name)
        for h in search_catalog(query, 51)
    ]
    pair = bare_reads.Pair(
        "", bare_reads.BARE_SEARCH, bare_reads.search_values(query), bare_reads.SEARCH_SETTINGS
    )
    bare = [
        (*row[:4], round(row[4], 4), *row[5:])
        for row in bare_reads.run(connection.connection, pair)
    ]
    assert bare == served

"""The whole corpus derived end to end, with the catalog it must give."""

from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest

from catalog.models import ColumnLineageEdge, Dataset, Job, LineageEdge, Run, RunState
from catalog.names.naming import run_uuid
from catalog.services.derive import derive_events
from ingest.models import Event
from tests.catalog.helpers import corpus_records, store
from tests.conftest import CORPUS

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def _derived_once(module_transaction: Callable[[], AbstractContextManager[None]]) -> None:
    # Derived once for the module's tests, every one of which reads it (ADR 0210); each
    # test's writes are rolled back to it (ADR 0113).
    if not CORPUS.is_dir():
        pytest.fail(f"The OpenLineage corpus is missing at {CORPUS} (set LINEAGE_CORPUS).")
    with module_transaction():
        result = derive_events(store(corpus_records(CORPUS)))
        assert result.failed == 0, result.errors
        assert not Event.objects.filter(derivation_status="pending").exists()


@pytest.fixture
def derived_corpus(_derived_once: None, db: None) -> None:
    """The whole corpus, stored and derived once for the module."""


def test_spark_and_hive_symlinks_make_one_dataset_per_table(derived_corpus) -> None:
    for table in ("t1", "t2"):
        by_location = Dataset.objects.for_alias(
            "hdfs://dataproc-producer-test-m", f"/user/hive/warehouse/{table}"
        ).get()
        by_table = Dataset.objects.for_alias(
            "hive://dataproc-producer-test-m:9083", f"default.{table}"
        ).get()
        assert by_location == by_table
    glue = Dataset.objects.for_alias(
        "aws:glue:us-west-2:123456789012", "my_glue_database.my_glue_table"
    ).get()
    assert (
        glue
        == Dataset.objects.for_alias("s3://my-bucket-test", "/sample_data/input_data.parquet").get()
    )


def test_spark_application_is_the_parent_of_its_actions(derived_corpus) -> None:
    application = Job.objects.get(namespace="default", name="cl_i_test_application")
    assert not application.is_placeholder
    children = set(application.children.values_list("name", flat=True))
    assert "cl_i_test_application.execute_insert_into_hive_table.warehouse_t2" in children
    app_run = Run.objects.get(run_uuid="019299c5-12f5-7946-b5b2-c6abab662e20")
    assert app_run.state == RunState.COMPLETE
    assert app_run.child_runs.count() >= 5
    t1 = Dataset.objects.for_alias("hive://dataproc-producer-test-m:9083", "default.t1").get()
    t2 = Dataset.objects.for_alias("hive://dataproc-producer-test-m:9083", "default.t2").get()
    assert LineageEdge.objects.filter(source=t1, target=t2).exists()


def test_airflow_dag_is_the_parent_of_its_tasks_and_edges_chain(derived_corpus) -> None:
    dag = Job.objects.get(namespace="airflow", name="BQ")
    assert set(dag.children.values_list("name", flat=True)) >= {
        "BQ.upload",
        "BQ.copy",
        "BQ.download",
    }
    upload = Dataset.objects.for_alias("bigquery", "mock-project.test.upload").get()
    copy = Dataset.objects.for_alias("bigquery", "mock-project.test.upload_cp").get()
    edge = LineageEdge.objects.get(source=upload, target=copy)
    assert edge.job.name == "BQ.copy" and edge.run_count == 1
    assert Dataset.objects.for_alias("gs://mock-bucket", "copied.csv").exists()
    # Arrival order differs from eventTime order in this scenario; state is by content.
    assert (
        not Run.objects.filter(job__namespace="airflow", is_placeholder=False)
        .exclude(state__in=[RunState.COMPLETE, RunState.FAIL, RunState.RUNNING, RunState.START])
        .exists()
    )


def test_column_lineage_scenario(derived_corpus) -> None:
    target = Dataset.objects.for_alias("bigquery", "mock-project.test.upload").get()
    columns = ColumnLineageEdge.objects.filter(target=target)
    assert {(c.source_field, c.target_field, c.transformation_type) for c in columns} >= {
        ("a", "a", "IDENTITY")
    }
    tbl1 = Dataset.objects.for_alias("file", "/tmp/cll_test/tbl1").get()
    assert ColumnLineageEdge.objects.filter(target=tbl1).exists()


def test_odd_producers_are_derived(derived_corpus) -> None:
    # A runId that is not a UUID, mapped by uuid5 over the job.
    assert Run.objects.filter(run_uuid=run_uuid("run_id", "job_namespace", "job_name")).exists()
    # Debezium: a STREAMING job that never completes is running.
    streaming = Run.objects.get(run_uuid="0197ad84-7a0d-7527-9f8a-a08602319b4d")
    assert streaming.is_streaming and streaming.state == RunState.RUNNING

"""Names, aliases (symlinks, renames, rules), merges, facets and fields, edges, edge API."""

import uuid

import pytest

from catalog.models import (
    AliasReason,
    AliasRule,
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    Job,
    JobLineageEdge,
    LineageEdge,
    MetadataRecord,
    Run,
)
from catalog.names.naming import normalise
from catalog.services.derive import derive_events, rederive
from tests.catalog.conftest import dataset, facet, run_event
from tests.catalog.helpers import canonical_dump, edge, metadata, openlineage, store

pytestmark = pytest.mark.django_db


def derive(*events: dict) -> None:
    for event in events:
        derive_events(store([openlineage(event)]))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (("s3a://bucket/", "/path/to/data/"), ("s3://bucket", "path/to/data")),
        (("s3n://Bucket", "x//y"), ("s3://bucket", "x/y")),
        (("postgres://DB.example.com", "db.s.t"), ("postgres://db.example.com:5432", "db.s.t")),
        (("postgresql://user@h:5432", "d.s.t"), ("postgres://h:5432", "d.s.t")),
        (("kafka://kafka-prod", "topic"), ("kafka://kafka-prod:9092", "topic")),
        (("hdfs://nn/", "/user/hive/warehouse/t1/"), ("hdfs://nn", "/user/hive/warehouse/t1")),
        (("bigquery", "p.d.t"), ("bigquery", "p.d.t")),
    ],
)
def test_names_are_normalised_as_openlineage_clients_write_them(raw, expected) -> None:
    assert normalise(*raw) == expected


def test_symlinks_are_an_undirected_equivalence() -> None:
    table = {"namespace": "hive://metastore:9083", "name": "sales.orders", "type": "TABLE"}
    location = {"namespace": "hdfs://nn", "name": "/warehouse/sales.db/orders", "type": "LOCATION"}
    # Spark: location → table; the Hive hook: table → location. Different runs, one dataset.
    derive(
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            job=("spark", "a"),
            outputs=[
                dataset(
                    "hdfs://nn", "/warehouse/sales.db/orders", symlinks=facet(identifiers=[table])
                )
            ],
        ),
        run_event(
            "COMPLETE",
            2,
            str(uuid.uuid4()),
            job=("hive", "b"),
            inputs=[
                dataset(
                    "hive://metastore:9083", "sales.orders", symlinks=facet(identifiers=[location])
                )
            ],
        ),
    )
    assert Dataset.objects.count() == 1
    found = Dataset.objects.for_alias("hive://metastore", "sales.orders").get()
    assert found == Dataset.objects.for_alias("hdfs://nn/", "/warehouse/sales.db/orders/").get()
    # The display name is the logical one (the TABLE symlink), not the storage location,
    # whatever the order (issue 12).
    assert (found.namespace, found.name) == ("hive://metastore:9083", "sales.orders")
    reasons = dict(DatasetAlias.objects.values_list("namespace", "reason"))
    assert reasons == {"hdfs://nn": AliasReason.EVENT, "hive://metastore:9083": AliasReason.EVENT}


def test_merge_repoints_edges_and_keeps_one_survivor() -> None:
    job_one, job_two = ("j", "one"), ("j", "two")
    derive(
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            job=job_one,
            inputs=[dataset("s3://raw", "a")],
            outputs=[dataset("s3://lake", "b")],
        ),
        run_event(
            "COMPLETE",
            2,
            str(uuid.uuid4()),
            job=job_two,
            inputs=[dataset("hive://m:9083", "lake.b")],
            outputs=[dataset("s3://mart", "c")],
        ),
    )
    assert Dataset.objects.count() == 4
    symlink = facet(identifiers=[{"namespace": "hive://m:9083", "name": "lake.b", "type": "TABLE"}])
    derive(
        run_event(
            "COMPLETE",
            3,
            str(uuid.uuid4()),
            job=("j", "three"),
            outputs=[dataset("s3://lake", "b", symlinks=symlink)],
        )
    )
    assert Dataset.objects.count() == 3
    merged = Dataset.objects.for_alias("s3://lake", "b").get()
    assert merged.aliases.count() == 2
    assert LineageEdge.objects.filter(target=merged).count() == 1
    assert LineageEdge.objects.filter(source=merged).count() == 1
    # Job edges follow the merge too: three on the survivor, none left on the merged-away
    # dataset, and each edge's run count is its runs'.
    assert sorted(
        JobLineageEdge.objects.filter(dataset=merged).values_list("job__name", "direction")
    ) == [("one", "output"), ("three", "output"), ("two", "input")]
    assert JobLineageEdge.objects.count() == 5
    for job_edge in JobLineageEdge.objects.all():
        assert job_edge.run_count == job_edge.runs.count() == 1


def test_alias_rule_equates_trino_and_hive_names_and_rederive_regroups() -> None:
    derive(
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            job=("trino", "q"),
            outputs=[dataset("trino://coordinator:8443", "lakehouse.sales.x")],
        ),
        run_event(
            "COMPLETE",
            2,
            str(uuid.uuid4()),
            job=("hive", "q"),
            inputs=[dataset("hive://hive-metastore:9083", "sales.x")],
        ),
    )
    assert Dataset.objects.count() == 2
    rule = AliasRule.objects.create(
        slug="trino-lakehouse-is-hive",
        namespace="trino://coordinator:8443",
        name_pattern=r"lakehouse\.(.+)",
        target_namespace="hive://hive-metastore:9083",
        target_name=r"\1",
    )
    rederive()
    assert Dataset.objects.count() == 1
    hive = DatasetAlias.objects.for_name("hive://hive-metastore:9083", "sales.x").get()
    assert hive.reason == AliasReason.EVENT  # it was also named by an event: strongest reason
    assert Dataset.objects.for_alias("trino://coordinator:8443", "lakehouse.sales.x").get()
    rule.delete()
    rederive()
    assert Dataset.objects.count() == 2


def test_rule_only_alias_records_the_rule() -> None:
    rule = AliasRule.objects.create(
        slug="pg-to-warehouse",
        namespace="postgres://old:5432",
        name_pattern="(.*)",
        target_namespace="postgres://new:5432",
        target_name=r"\1",
    )
    derive(
        run_event("COMPLETE", 1, str(uuid.uuid4()), outputs=[dataset("postgres://old", "d.s.t")])
    )
    alias = DatasetAlias.objects.for_name("postgres://new:5432", "d.s.t").get()
    assert (alias.reason, alias.reason_rule_id, alias.reason_detail) == ("rule", rule.id, rule.slug)


def test_dataset_facets_schema_fields_rename_and_drop() -> None:
    schema_v1 = facet(fields=[{"name": "id", "type": "int"}])
    schema_v2 = facet(
        fields=[
            {"name": "id", "type": "bigint"},
            {"name": "s", "type": "struct", "fields": [{"name": "a", "type": "string"}]},
        ]
    )
    rename = facet(
        lifecycleStateChange="RENAME",
        previousIdentifier={"namespace": "postgres://db:5432", "name": "d.s.old"},
    )
    drop = facet(lifecycleStateChange="DROP")
    derive(
        run_event(
            "COMPLETE",
            2,
            str(uuid.uuid4()),
            outputs=[
                dataset(
                    "postgres://db:5432", "d.s.new", schema=schema_v2, lifecycleStateChange=rename
                )
            ],
        ),
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            outputs=[dataset("postgres://db:5432", "d.s.new", schema=schema_v1)],
        ),
    )
    renamed = Dataset.objects.for_alias("postgres://db:5432", "d.s.old").get()
    assert renamed == Dataset.objects.for_alias("postgres://db:5432", "d.s.new").get()
    assert list(renamed.fields.values_list("name", "type")) == [
        ("id", "bigint"),
        ("s", "struct"),
        ("s.a", "string"),
    ]
    assert renamed.lifecycle_state == "RENAME" and not renamed.is_dropped
    derive(
        run_event(
            "COMPLETE",
            3,
            str(uuid.uuid4()),
            outputs=[dataset("postgres://db:5432", "d.s.new", lifecycleStateChange=drop)],
        )
    )
    renamed.refresh_from_db()
    assert renamed.is_dropped


def test_edges_accumulate_over_a_run_and_keep_history() -> None:
    run_a = str(uuid.uuid4())
    # Inputs and outputs of one run in different events.
    derive(
        run_event("START", 0, run_a, inputs=[dataset("s3://b", "in1")]),
        run_event("COMPLETE", 10, run_a, outputs=[dataset("s3://b", "out")]),
    )
    assert LineageEdge.objects.count() == 1
    # A later run of the same job touches fewer datasets: the old edge stays (history).
    run_b = str(uuid.uuid4())
    derive(
        run_event(
            "COMPLETE",
            100,
            run_b,
            inputs=[dataset("s3://b", "in2")],
            outputs=[dataset("s3://b", "out")],
        )
    )
    edges = {e.source.name: e for e in LineageEdge.objects.select_related("source")}
    assert set(edges) == {"in1", "in2"}
    assert edges["in1"].last_run.run_uuid == uuid.UUID(run_a)
    assert edges["in2"].last_seen > edges["in1"].last_seen
    run_c = str(uuid.uuid4())
    derive(
        run_event(
            "COMPLETE",
            200,
            run_c,
            inputs=[dataset("s3://b", "in1")],
            outputs=[dataset("s3://b", "out")],
        )
    )
    edges = {e.source.name: e for e in LineageEdge.objects.select_related("source")}
    assert edges["in1"].run_count == 2 and edges["in1"].last_run.run_uuid == uuid.UUID(run_c)


def test_column_lineage_becomes_column_edges_with_transformation() -> None:
    column_lineage = facet(
        fields={
            "total": {
                "inputFields": [
                    {
                        "namespace": "s3://b",
                        "name": "in",
                        "field": "amount",
                        "transformations": [
                            {"type": "DIRECT", "subtype": "AGGREGATION", "masking": False}
                        ],
                    },
                ]
            }
        }
    )
    derive(
        run_event(
            "COMPLETE",
            1,
            str(uuid.uuid4()),
            inputs=[dataset("s3://b", "in")],
            outputs=[dataset("s3://b", "out", columnLineage=column_lineage)],
        )
    )
    column_edge = ColumnLineageEdge.objects.get()
    assert (column_edge.source_field, column_edge.target_field) == ("amount", "total")
    assert (column_edge.transformation_type, column_edge.transformation_subtype) == (
        "DIRECT",
        "AGGREGATION",
    )


def test_edge_api_names_are_looked_up_by_the_same_string_and_pipeline_is_a_job_and_run() -> None:
    derive_events(
        store(
            [
                edge(
                    {
                        "source_table": "mlflow.Production.credit_risk",
                        "target_table": "iceberg.gold.predictions",
                        "lineage_type": "model_inference",
                        "pipeline": "dagster:score_customers:7a1c",
                    }
                )
            ]
        )
    )
    source = Dataset.objects.for_table_name("mlflow.Production.credit_risk").get()
    target = Dataset.objects.for_table_name("iceberg.gold.predictions").get()
    line = LineageEdge.objects.get(source=source, target=target)
    assert line.lineage_type == "model_inference"
    assert (line.job.namespace, line.job.name) == ("dagster", "score_customers")
    assert Run.objects.get(run_id_text="7a1c").state == "COMPLETE"


def test_metadata_records_are_searchable() -> None:
    derive_events(
        store(
            [
                metadata(
                    {
                        "resource": "model-42",
                        "subject": "credit_risk",
                        "action": "promoted",
                        "timestamp": "2026-01-01T00:00:00Z",
                        "additionalValues": {"stage": "Production"},
                    }
                )
            ]
        )
    )
    found = MetadataRecord.objects.search(subject="credit_risk", values={"stage": "Production"})
    assert [record.resource for record in found] == ["model-42"]
    assert not MetadataRecord.objects.search(values={"stage": "Staging"}).exists()


def test_rederive_equals_incremental_derivation(corpus) -> None:
    from tests.catalog.helpers import corpus_records

    for stored in store(corpus_records()):
        derive_events([stored])
    incremental = canonical_dump()
    rederive()
    assert canonical_dump() == incremental
    assert Job.objects.exists()

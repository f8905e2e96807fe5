"""Every facet of the table, derived and shown: each registered facet has a case here
that ingests an event carrying it, derives it, and reads what it became through /api/v1
and through the Marquez mount (issue 29 item 1, ADR 0067). Adding a facet to
catalog/facets/ without a case here fails ``test_every_registered_facet_has_a_case``."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from catalog import facets as table
from catalog.facets import (
    catalog_identity,
    column_lineage,
    data_quality_assertions,
    data_quality_metrics,
    data_source,
    documentation,
    error_message,
    input_statistics,
    job_type,
    lifecycle_state_change,
    lineage_catalog_edge,
    nominal_time,
    output_statistics,
    ownership,
    parent,
    processing_engine,
    schema,
    source_code,
    source_code_location,
    sql,
    storage,
    symlinks,
    tags,
)
from catalog.models import Dataset, Run
from catalog.services.derive import derive_events
from tests.api.project_fixtures import derive
from tests.catalog.facets import flow_cases, grown_cases, lineage_case
from tests.catalog.facets.world import (
    INPUT,
    JOB,
    OUTPUT,
    PARENT_RUN,
    Reads,
    event,
    facet,
    ok,
)
from tests.catalog.helpers import edge, store

pytestmark = pytest.mark.django_db

Check = Callable[[Reads], None]


@dataclass(frozen=True)
class Case:
    derive: Callable[[], None]
    native: Check
    marquez: Check


def _events(*events: dict[str, Any]) -> Callable[[], None]:
    return lambda: derive(*events)


CASES: dict[str, Case] = {}


def case(name: str, derive_it: Callable[[], None]) -> Callable[[type], type]:
    """Register the class's ``native`` and ``marquez`` checks as the case of ``name``."""

    def register(checks: type) -> type:
        CASES[name] = Case(derive_it, checks.native, checks.marquez)
        return checks

    return register


# --- job facets -----------------------------------------------------------------------

STREAMING = facet(
    "2-0-3/JobTypeJobFacet", processingType="STREAMING", integration="SPARK", jobType="JOB"
)


@case(job_type.NAME, _events(event("RUNNING", job={job_type.NAME: STREAMING})))
class JobTypeCase:
    @staticmethod
    def native(r: Reads) -> None:
        job = r.job()
        assert (job["processing_type"], job["job_type"], job["integration"]) == (
            "STREAMING",
            "JOB",
            "SPARK",
        )
        assert r.run()["is_streaming"] is True

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_job()["type"] == "STREAM"


@case(
    documentation.NAME,
    _events(
        event(
            job={documentation.NAME: facet("1-1-0/DocumentationJobFacet", description="Daily.")},
            output_facets={
                documentation.NAME: facet("1-1-0/DocumentationDatasetFacet", description="Mart.")
            },
        )
    ),
)
class DocumentationCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.job()["description"] == "Daily."
        assert r.dataset()["description"] == "Mart."

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_job()["description"] == "Daily."
        assert r.mz_dataset()["description"] == "Mart."


def _kept_as_sent(name: str, holder: str, value: dict[str, Any]) -> type:
    """A facet only kept in its holder's facets: both surfaces serve it there."""

    def read(r: Reads, marquez: bool) -> dict[str, Any]:
        if holder == "job":
            return r.mz_job() if marquez else r.job()
        if holder == "run":
            return r.mz_run() if marquez else r.run()
        return r.mz_dataset() if marquez else r.dataset()

    def check(r: Reads, marquez: bool) -> None:
        served = read(r, marquez)["facets"][name]
        assert {k: v for k, v in served.items() if not k.startswith("_")} == {
            k: v for k, v in value.items() if not k.startswith("_")
        }

    place = {"job": "job", "run": "run", "dataset": "output_facets"}[holder]
    derive_it = _events(event(**{place: {name: value}}))
    checks = type(
        name,
        (),
        {
            "native": staticmethod(lambda r: check(r, False)),
            "marquez": staticmethod(lambda r: check(r, True)),
        },
    )
    return case(name, derive_it)(checks)


OWNERS = facet("1-0-1/OwnershipJobFacet", owners=[{"name": "team:data", "type": "MAINTAINER"}])


@case(ownership.NAME, _events(event(job={ownership.NAME: OWNERS})))
class OwnershipCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.job()["owners"] == [
            {"name": "team:data", "type": "MAINTAINER", "source": "producer"}
        ]

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_job()["facets"][ownership.NAME]["owners"] == OWNERS["owners"]


TAGS = facet("1-0-0/TagsDatasetFacet", tags=[{"key": "pii", "value": "true", "field": "email"}])


@case(tags.NAME, _events(event(output_facets={tags.NAME: TAGS})))
class TagsCase:
    @staticmethod
    def native(r: Reads) -> None:
        [tag] = r.dataset()["tags"]
        assert (tag["key"], tag["value"], tag["field"]) == ("pii", "true", "email")

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_dataset()["tags"] == []  # a column's tag is on the field
        assert ok(r.mz.get("/tags"))["tags"] == [{"name": "pii:true", "description": None}]


_kept_as_sent(sql.NAME, "job", facet("1-1-0/SQLJobFacet", query="SELECT id FROM orders"))
_kept_as_sent(
    source_code.NAME,
    "job",
    facet("1-0-1/SourceCodeJobFacet", language="python", sourceCode="print(1)"),
)
_kept_as_sent(
    processing_engine.NAME,
    "run",
    facet("1-1-1/ProcessingEngineRunFacet", version="3.5.1", name="spark"),
)
_kept_as_sent(
    storage.NAME,
    "dataset",
    facet("1-0-1/StorageDatasetFacet", storageLayer="iceberg", fileFormat="parquet"),
)

LOCATION = facet("1-0-1/SourceCodeLocationJobFacet", type="git", url="https://github.com/acme/etl")


@case(source_code_location.NAME, _events(event(job={source_code_location.NAME: LOCATION})))
class SourceCodeLocationCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.job()["facets"][source_code_location.NAME]["url"] == LOCATION["url"]

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_job()["location"] == LOCATION["url"]


# --- run facets -----------------------------------------------------------------------

PARENT = facet(
    "1-1-0/ParentRunFacet",
    job={"namespace": JOB[0], "name": "orders.parent"},
    run={"runId": PARENT_RUN},
)


@case(parent.NAME, _events(event(run={parent.NAME: PARENT})))
class ParentCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.job()["parent"]["name"] == "orders.parent"
        assert r.run()["parent_run_id"] == PARENT_RUN

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_job()["parentJobName"] == "orders.parent"


NOMINAL = facet(
    "1-0-1/NominalTimeRunFacet",
    nominalStartTime="2026-03-01T00:00:00Z",
    nominalEndTime="2026-03-02T00:00:00Z",
)


@case(nominal_time.NAME, _events(event(run={nominal_time.NAME: NOMINAL})))
class NominalTimeCase:
    @staticmethod
    def native(r: Reads) -> None:
        run = r.run()
        assert run["nominal_start_time"].startswith("2026-03-01T00:00:00")
        assert run["nominal_end_time"].startswith("2026-03-02T00:00:00")

    @staticmethod
    def marquez(r: Reads) -> None:
        run = r.mz_run()
        assert (run["nominalStartTime"], run["nominalEndTime"]) == (
            "2026-03-01T00:00:00Z",
            "2026-03-02T00:00:00Z",
        )


ERROR = facet(
    "1-0-1/ErrorMessageRunFacet", message="division by zero", programmingLanguage="python"
)


@case(error_message.NAME, _events(event("FAIL", run={error_message.NAME: ERROR})))
class ErrorMessageCase:
    @staticmethod
    def native(r: Reads) -> None:
        run = r.run()
        assert (run["state"], run["error_message"]) == ("FAIL", "division by zero")

    @staticmethod
    def marquez(r: Reads) -> None:
        run = r.mz_run()
        assert run["state"] == "FAILED"
        assert run["facets"][error_message.NAME]["message"] == "division by zero"


def _derive_edge() -> None:
    derive_events(
        store(
            [
                edge(
                    {
                        "source_table": "shop.orders",
                        "target_table": "marts.orders",
                        "lineage_type": "ml_feature",
                        "pipeline": "airflow:features:run-7",
                    }
                )
            ]
        )
    )


def _edge_run() -> Run:
    return Run.objects.get(job__namespace="airflow", job__name="features")


@case(lineage_catalog_edge.NAME, _derive_edge)
class LineageCatalogEdgeCase:
    @staticmethod
    def native(r: Reads) -> None:
        run = ok(r.api.get(f"/api/v1/runs/{_edge_run().run_uuid}"))
        assert run["facets"][lineage_catalog_edge.NAME]["lineage_type"] == "ml_feature"
        target = Dataset.objects.for_table_name("marts.orders").get()
        graph = ok(r.api.get("/api/v1/lineage/graph", {"node": f"dataset:{target.id}"}))
        assert ["ml_feature"] in [e["lineage_types"] for e in graph["edges"]]

    @staticmethod
    def marquez(r: Reads) -> None:
        run = ok(r.mz.get(f"/jobs/runs/{_edge_run().run_uuid}"))
        assert run["facets"][lineage_catalog_edge.NAME]["pipeline"] == "airflow:features:run-7"


# --- dataset facets -------------------------------------------------------------------

SCHEMA = facet(
    "1-2-0/SchemaDatasetFacet",
    fields=[
        {"name": "id", "type": "bigint"},
        {"name": "address", "type": "struct", "fields": [{"name": "city", "type": "string"}]},
    ],
)


@case(schema.NAME, _events(event(output_facets={schema.NAME: SCHEMA})))
class SchemaCase:
    @staticmethod
    def native(r: Reads) -> None:
        fields = r.dataset()["fields"]
        assert [(f["name"], f["type"]) for f in fields] == [
            ("id", "bigint"),
            ("address", "struct"),
            ("address.city", "string"),
        ]

    @staticmethod
    def marquez(r: Reads) -> None:
        assert [f["name"] for f in r.mz_dataset()["fields"]] == ["id", "address", "address.city"]
        assert [f["name"] for f in r.mz_version()["fields"]] == ["id", "address"]


SYMLINK = facet(
    "1-0-1/SymlinksDatasetFacet",
    identifiers=[{"namespace": "hive://metastore", "name": "marts.orders", "type": "TABLE"}],
)


@case(symlinks.NAME, _events(event(output_facets={symlinks.NAME: SYMLINK})))
class SymlinksCase:
    @staticmethod
    def native(r: Reads) -> None:
        dataset = r.dataset()
        names = {(a["namespace"], a["name"], a["reason"]) for a in dataset["aliases"]}
        assert ("hive://metastore:9083", "marts.orders", "symlink") in names
        assert dataset["name"] == "marts.orders"  # a TABLE symlink is the display name

    @staticmethod
    def marquez(r: Reads) -> None:
        dataset = r.mz_dataset()
        assert dataset["name"] == "marts.orders"
        assert dataset["facets"][symlinks.NAME]["identifiers"][0]["type"] == "TABLE"


CATALOG = facet(
    "1-1-0/CatalogDatasetFacet",
    framework="iceberg",
    type="glue",
    name="lake",
    warehouseUri="s3://lake/warehouse",
)


@case(catalog_identity.NAME, _events(event(output_facets={catalog_identity.NAME: CATALOG})))
class CatalogCase:
    @staticmethod
    def native(r: Reads) -> None:
        dataset = r.dataset()
        aliases = {(a["namespace"], a["name"], a["reason"]) for a in dataset["aliases"]}
        assert ("catalog:iceberg/glue", "s3://lake/warehouse#marts/orders", "catalog") in aliases
        assert dataset["name"] == "marts/orders"  # the key ranks below a storage path

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_dataset()["facets"][catalog_identity.NAME]["name"] == "lake"


RENAME = facet(
    "1-0-1/LifecycleStateChangeDatasetFacet",
    lifecycleStateChange="RENAME",
    previousIdentifier={"namespace": OUTPUT[0], "name": "marts/orders_old"},
)


@case(
    lifecycle_state_change.NAME, _events(event(output_facets={lifecycle_state_change.NAME: RENAME}))
)
class LifecycleStateChangeCase:
    @staticmethod
    def native(r: Reads) -> None:
        dataset = r.dataset()
        assert (dataset["lifecycle_state"], dataset["is_dropped"]) == ("RENAME", False)
        assert dataset["lifecycle_changed_at"].startswith("2026-03-01T10:05:00")
        aliases = {(a["name"], a["reason"]) for a in dataset["aliases"]}
        assert ("marts/orders_old", "rename") in aliases

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_dataset()["lifecycleState"] == "RENAME"
        assert r.mz_version()["lifecycleState"] == "RENAME"


SOURCE = facet("1-0-1/DatasourceDatasetFacet", name="lake-prod", uri="s3://lake")


@case(data_source.NAME, _events(event(output_facets={data_source.NAME: SOURCE})))
class DataSourceCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.dataset()["facets"][data_source.NAME]["name"] == "lake-prod"

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_dataset()["sourceName"] == "lake-prod"
        assert r.mz_version()["sourceName"] == "lake-prod"


LINEAGE = facet(
    "1-2-0/ColumnLineageDatasetFacet",
    fields={
        "total": {
            "inputFields": [
                {
                    "namespace": INPUT[0],
                    "name": INPUT[1],
                    "field": "amount",
                    "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}],
                }
            ]
        }
    },
)


@case(column_lineage.NAME, _events(event(output_facets={column_lineage.NAME: LINEAGE})))
class ColumnLineageCase:
    @staticmethod
    def native(r: Reads) -> None:
        dataset = r.dataset()
        assert column_lineage.NAME not in dataset["facets"]  # kept as column facts
        [entry] = dataset["column_lineage"]
        assert (entry["target_field"], entry["source_field"]) == ("total", "amount")
        assert (entry["transformation_type"], entry["transformation_subtype"]) == (
            "DIRECT",
            "AGGREGATION",
        )

    @staticmethod
    def marquez(r: Reads) -> None:
        [entry] = r.mz_dataset()["columnLineage"]
        assert entry["name"] == "total"
        assert [(i["dataset"], i["field"]) for i in entry["inputFields"]] == [(INPUT[1], "amount")]


# --- run facts (input/output facets) --------------------------------------------------


def _run_fact(
    module: Any, direction: str, value: dict[str, Any], entry_key: str, expected: Any
) -> None:
    io = {"input_io" if direction == "input" else "output_io": {module.NAME: value}}

    def native(r: Reads) -> None:
        [entry] = [e for e in r.run()["dataset_facts"] if e["direction"] == direction]
        assert entry[entry_key] == expected
        [fact] = r.dataset(INPUT if direction == "input" else OUTPUT)["run_facts"]
        assert fact[entry_key] == expected

    def marquez(r: Reads) -> None:
        [version] = r.mz_run()[f"{direction}DatasetVersions"]
        served = version["facets"][module.NAME]
        assert {k: v for k, v in served.items() if not k.startswith("_")} == {
            k: v for k, v in value.items() if not k.startswith("_")
        }

    CASES[module.NAME] = Case(_events(event(**io)), native, marquez)


_run_fact(
    output_statistics,
    "output",
    facet("1-0-2/OutputStatisticsOutputDatasetFacet", rowCount=10, size=100, fileCount=1),
    "statistics",
    {"row_count": 10, "bytes": 100, "file_count": 1},
)
_run_fact(
    input_statistics,
    "input",
    facet("1-0-0/InputStatisticsInputDatasetFacet", rowCount=12, size=120, fileCount=2),
    "statistics",
    {"row_count": 12, "bytes": 120, "file_count": 2},
)
_run_fact(
    data_quality_metrics,
    "input",
    facet(
        "1-0-3/DataQualityMetricsInputDatasetFacet",
        rowCount=5,
        bytes=50,
        columnMetrics={"amount": {"nullCount": 0}},
    ),
    "quality_metrics",
    {
        "row_count": 5,
        "bytes": 50,
        "file_count": None,
        "column_metrics": {"amount": {"nullCount": 0}},
    },
)
_run_fact(
    data_quality_assertions,
    "input",
    facet(
        "1-0-1/DataQualityAssertionsDatasetFacet",
        assertions=[{"assertion": "not_null", "success": True, "column": "amount"}],
    ),
    "assertions",
    [
        {
            "assertion": "not_null",
            "success": True,
            "column": "amount",
            **dict.fromkeys(("name", "severity", "expected", "actual")),
        }
    ],
)
# Issue 41 item 6 (ADR 0092): the run's tests and parameters, an input's subset.
for _name, (_derive, _native, _marquez) in (grown_cases.CASES | flow_cases.CASES).items():
    CASES[_name] = Case(_derive, _native, _marquez)
CASES[lineage_case.lineage.NAME] = Case(*lineage_case.CASE)  # experimental (ADR 0094)


def test_every_registered_facet_has_a_case():
    """Those the catalog reads; the unread ones (kept.KEPT) are served as sent from the
    spec's own examples in test_spec_examples.py."""
    unread = {facet.name for facet in table.kept.KEPT}
    assert set(CASES) == set(table.BY_NAME) - unread


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_facet_is_derived_and_shown_by_both_apis(name, api, mz):
    CASES[name].derive()
    reads = Reads(api, mz)
    CASES[name].native(reads)
    CASES[name].marquez(reads)

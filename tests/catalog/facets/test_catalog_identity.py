"""Issue 41 item 3 (ADR 0093): CatalogDatasetFacet is an identity hint. Spark's path with
its Hive symlink and Trino's ``lakehouse.db.t``, both sent with the same catalog facet,
become aliases of one dataset in /api/v1 and the Marquez mount, in any order and across a
rederive; a different catalog, a silent facet or a facet of a bad shape merges nothing."""

from typing import Any

import pytest

from catalog.facets import catalog_identity, symlinks
from catalog.models import Dataset
from catalog.services.derive import rederive
from tests.api.project_fixtures import derive
from tests.catalog.facets.world import facet, ok, q

pytestmark = pytest.mark.django_db

SPARK = ("s3a://bucket", "warehouse/db.db/t")
SPARK_STORED = ("s3://bucket", "warehouse/db.db/t")
HIVE = ("hive://metastore:9083", "db.t")
TRINO = ("trino://coordinator:8443", "lakehouse.db.t")
OTHER_TRINO = ("trino://other:8443", "lakehouse.db.t")
METASTORE = "thrift://metastore:9083"


def _catalog(uri: str = METASTORE, **more: Any) -> dict[str, Any]:
    fields = {"framework": "hive", "type": "hive", "name": "lakehouse", "metadataUri": uri}
    return facet("1-1-0/CatalogDatasetFacet", **{**fields, **more})


def _event(job: str, run: str, dataset: tuple[str, str], facets: dict[str, Any]) -> dict:
    return {
        "eventType": "COMPLETE",
        "eventTime": f"2026-03-01T10:0{run[-1]}:00Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": f"0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d770{run[-1]}"},
        "job": {"namespace": "engines", "name": job},
        "inputs": [],
        "outputs": [{"namespace": dataset[0], "name": dataset[1], "facets": facets}],
    }


def _spark(catalog: dict[str, Any] | None) -> dict:
    link = {"namespace": HIVE[0], "name": HIVE[1], "type": "TABLE"}
    facets: dict[str, Any] = {
        symlinks.NAME: facet("1-0-1/SymlinksDatasetFacet", identifiers=[link])
    }
    if catalog is not None:
        facets[catalog_identity.NAME] = catalog
    return _event("spark.write", "run1", SPARK, facets)


def _trino(catalog: dict[str, Any] | None, where: tuple[str, str] = TRINO, run: str = "2") -> dict:
    facets = {catalog_identity.NAME: catalog} if catalog is not None else {}
    return _event(f"trino.{run}", f"run{run}", where, facets)


def _ids(*names: tuple[str, str]) -> set[int]:
    return {Dataset.objects.for_alias(*name).get().id for name in names}


def test_two_engines_one_catalog_are_one_dataset_in_both_apis(api, mz):
    derive(
        _spark(_catalog()),
        _trino(_catalog()),
        _trino(_catalog("thrift://other:9083"), OTHER_TRINO, "3"),
    )
    (merged,) = _ids(SPARK, HIVE, TRINO)
    assert _ids(OTHER_TRINO) != {merged}  # another metastore: its own dataset
    dataset = ok(api.get(f"/api/v1/datasets/{merged}"))
    names = {(a["namespace"], a["name"]): a["reason"] for a in dataset["aliases"]}
    assert names[SPARK_STORED] == names[TRINO] == "event" and names[HIVE] == "symlink"
    key = ("catalog:hive/hive", "thrift://metastore:9083#db.t")
    assert names[key] == "catalog"
    assert dataset["name"] == "db.t"  # the TABLE symlink stays the title
    shown = [ok(mz.get(f"/namespaces/{q(ns)}/datasets/{q(n)}")) for ns, n in (SPARK_STORED, TRINO)]
    assert {(d["namespace"], d["name"]) for d in shown} == {HIVE}
    other = ok(mz.get(f"/namespaces/{q(OTHER_TRINO[0])}/datasets/{q(OTHER_TRINO[1])}"))
    assert other["name"] == OTHER_TRINO[1]


@pytest.mark.parametrize("trino_first", [False, True])
def test_any_order_and_a_rederive_give_the_same_merge_and_ids(trino_first):
    events = [_spark(_catalog()), _trino(_catalog())]
    derive(*(reversed(events) if trino_first else events))
    (merged,) = _ids(SPARK, HIVE, TRINO)
    rederive()
    assert _ids(SPARK, HIVE, TRINO) == {merged}  # ADR 0077: the dataset keeps its id


@pytest.mark.parametrize(
    "trino_catalog",
    [
        None,  # silent
        _catalog("thrift://other:9083"),  # another metastore
        _catalog(framework="iceberg"),  # another framework
        _catalog(metadataUri=None),  # no address: the name alone is the engine's label
        {"framework": "hive", "type": "hive", "name": "lakehouse", "metadataUri": 9083},
        {"framework": ["hive"], "type": "hive", "name": "lakehouse", "metadataUri": METASTORE},
        "hive",
        [],
    ],
)
def test_a_silent_different_or_bad_catalog_merges_nothing(trino_catalog):
    derive(_spark(_catalog()), _trino(trino_catalog))
    assert len(_ids(SPARK, TRINO)) == 2
    assert _ids(SPARK) == _ids(HIVE)  # the symlink still joins Spark's names


def test_a_jdbc_catalog_is_told_apart_by_its_name():
    jdbc = {"framework": "iceberg", "type": "jdbc", "metadataUri": "jdbc:postgresql://pg:5432/ice"}
    one = catalog_identity.identity({"catalog": {**jdbc, "name": "a"}}, "a.db.t", [])
    two = catalog_identity.identity({"catalog": {**jdbc, "name": "b"}}, "b.db.t", [])
    assert one and two and one != two
    assert one[0][1].endswith("#db.t")


def test_the_warehouse_uri_is_the_address_when_no_metadata_uri_is_sent():
    sent = {"framework": "iceberg", "type": "hadoop", "name": "c", "warehouseUri": "s3a://B/wh/"}
    assert catalog_identity.identity({"catalog": sent}, "c.db.t", []) == [
        ("catalog:iceberg/hadoop", "s3://b/wh#db.t")
    ]

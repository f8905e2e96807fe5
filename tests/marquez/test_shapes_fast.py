"""The mount's versions and job UUIDs, named without ``uuid.UUID``, are uuid5's (ADR 0110)."""

import uuid

import pytest

from api.marquez import shapes

NAMES = [
    ("airflow", "dag_1.task_1"),
    ("", ""),
    ("s3://lake", "raw/orders/daily"),
    ("trino://host:8443", "kätalog.schéma.täble ✓"),
    ("x" * 300, "y" * 5000),
]


@pytest.mark.parametrize(("namespace", "name"), NAMES)
def test_versions_and_job_uuids_are_uuid5(namespace, name):
    text = f"{namespace}\0{name}"
    assert shapes.job_version(namespace, name) == str(uuid.uuid5(shapes._VERSIONS, text))
    assert shapes.job_uuid(namespace, name) == str(uuid.uuid5(shapes._JOBS, text))

"""The mount's versions and job UUIDs, named without ``uuid.UUID``, are uuid5's (ADR 0110);
the node shapes' shortcuts for empty documents give what the long way gives (ADR 0118)."""

import json
import uuid

import pytest

from api.marquez import shapes
from catalog.facets import tags
from catalog.reads import marquez_graph
from core.redaction import redact

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


@pytest.mark.parametrize("empty", [{}, []])
def test_an_empty_document_is_given_new_and_not_walked(empty):
    """``shapes._redacted`` (ADR 0118): an empty document comes back as a new empty one, as
    ``redact`` gives it; any other goes through ``redact``."""
    given = shapes._redacted(empty)
    assert given == redact(empty) and given is not empty and type(given) is type(empty)
    secret = {"spark": {"password": "hunter2"}, "n": [1, {"token": "t"}]}
    assert shapes._redacted(secret) == redact(secret) != secret


@pytest.mark.parametrize("text", ["{}", "[]", '{"a": [1, 2.5, null]}', "[{}]", '"x"', "3"])
def test_jsonb_text_is_parsed_as_the_orm_parses_it(text):
    """``marquez_graph._json`` (ADR 0118): empty objects and arrays are not parsed, each a
    new one; everything else as ``json.loads``."""
    first, second = marquez_graph._json(text), marquez_graph._json(text)
    assert first == second == json.loads(text)
    if isinstance(first, dict | list):
        assert first is not second
    assert marquez_graph._json({"already": "parsed"}) == {"already": "parsed"}


def test_no_tags_are_no_names():
    assert shapes._tag_names([]) == shapes._tag_names(None) == tags.marquez_names([]) == []
    listed = [{"key": "tier", "value": "gold"}, {"key": "pii", "hidden": True}]
    assert shapes._tag_names(listed) == tags.marquez_names(listed) == ["tier:gold"]

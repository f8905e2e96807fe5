"""docs/marquez.md: "A ``#<version>`` suffix on a nodeId is accepted and answered with the
current graph". Marquez's client and UI append the version (a UUID) to a node's id; the
lineage and column-lineage answers for such an id are the answers for the bare id, byte for
byte, end to end over the mount. A ``#`` followed by anything else is part of the name."""

import pytest

from tests.marquez.conftest import JOB_NS, S3

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(world_once: None, db: None) -> None:
    """The conftest's world, written once for this module's tests (ADR 0210)."""


# A version as Marquez names one: a UUID, in either case (letters in it, so case matters).
VERSION = "6b1f0a52-3c1e-5d7a-9a4e-0c2f7b8d9e10"
NODES = [
    ("lineage", f"dataset:{S3}:raw/orders/daily"),
    ("lineage", f"job:{JOB_NS}:etl.load_orders"),
    ("column-lineage", f"dataset:{S3}:raw/orders/daily"),
    ("column-lineage", f"datasetField:{S3}:raw/orders/daily:total"),
]


@pytest.mark.parametrize(("route", "node"), NODES)
def test_a_version_suffix_answers_the_current_graph(world, mz, route, node):
    bare = mz.get(f"/{route}", nodeId=node, depth="3")
    assert bare.status_code == 200, bare.content
    for version in (VERSION, VERSION.upper()):
        versioned = mz.get(f"/{route}", nodeId=f"{node}#{version}", depth="3")
        assert versioned.status_code == 200, versioned.content
        assert versioned.content == bare.content


def test_a_hash_that_is_no_version_is_part_of_the_name(world, mz):
    response = mz.get("/lineage", nodeId=f"dataset:{S3}:raw/orders/daily#v1")
    assert response.status_code == 404
    assert "raw/orders/daily#v1" in response.json()["message"]

from collections.abc import Iterator

import pytest

from tests.ingest.kafka.cluster import mock_cluster

TOPICS = ("lineage", "metadata-records", "lineage-2")


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    with mock_cluster(*TOPICS) as address:
        yield address

"""Reads sent together in one round trip answer what ``read_rows`` answers one by one, each
prepared once on a kept connection; a logged connection or the setting off sends them one
after another as before (core.pipelined_reads, ADR 0140)."""

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import ProgrammingError, connection
from django.test.utils import CaptureQueriesContext

from core.pipelined_reads import rows_together
from core.prepared import read_rows
from tests.prepared_statements import prepared_runs

pytestmark = pytest.mark.django_db(transaction=True)

READS = [
    ("SELECT n, n * %(k)s::int FROM generate_series(1, 3) n ORDER BY n", {"k": 2}),
    ("SELECT 'pipelined:' || %(word)s::text", {"word": "one"}),
    ("SELECT n FROM generate_series(1, %(top)s::int) n WHERE false", {"top": 4}),
]
EXPECTED = [[(1, 2), (2, 4), (3, 6)], [("pipelined:one",)], []]


@pytest.fixture
def pipelines(fresh_connection: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many pipelines the connection opened (one per ``rows_together`` that sent its
    reads together)."""
    opened: list[int] = []
    pipeline = psycopg.Connection.pipeline

    def counted(self: Any) -> Any:
        opened.append(1)
        return pipeline(self)

    monkeypatch.setattr(psycopg.Connection, "pipeline", counted)
    yield opened


def test_reads_together_answer_as_one_by_one_in_one_pipeline(pipelines: list[int]) -> None:
    for _ in range(7):  # past PostgreSQL's five custom plans
        assert rows_together(READS) == EXPECTED
    assert len(pipelines) == 7
    assert [read_rows(sql, values) for sql, values in READS] == EXPECTED
    prepared = prepared_runs()
    assert len(prepared) == len(READS), prepared
    assert set(prepared.values()) == {8}, prepared  # seven together, one alone: one each


def test_a_logged_connection_sends_and_counts_each(pipelines: list[int]) -> None:
    with CaptureQueriesContext(connection) as queries:
        assert rows_together(READS) == EXPECTED
    assert len(queries) == len(READS)
    assert pipelines == []


def test_the_setting_off_prepares_nothing(pipelines: list[int], settings: Any) -> None:
    settings.LINEAGE = {**settings.LINEAGE, "PREPARE_READS": False}
    assert rows_together(READS) == EXPECTED
    assert pipelines == []
    assert prepared_runs() == {}


def test_one_read_is_sent_alone(pipelines: list[int]) -> None:
    assert rows_together(READS[:1]) == EXPECTED[:1]
    assert pipelines == []


def test_a_failing_read_raises_djangos_error_and_the_connection_goes_on(
    pipelines: list[int],
) -> None:
    broken = [READS[0], ("SELECT * FROM no_such_table_here", {}), READS[1]]
    with pytest.raises(ProgrammingError):
        rows_together(broken)
    assert rows_together(READS) == EXPECTED

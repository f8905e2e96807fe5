"""The index benches of ADR 0206 measure the indexes they name, and leave the log as it was.

``bench.ingest_indexes`` drops a variant's indexes of ``ingest_event`` and creates the others
again between rounds; ``bench.ingest_index_rows`` copies the table with every index but a
variant's. A figure printed for "without the md5 indexes" is only that if exactly those
are gone, and a run must give the log back every index it had.
"""

import psycopg
import pytest
from django.db import connection
from psycopg.conninfo import make_conninfo

from bench.ingest_index_rows import make_variant
from bench.ingest_indexes import SECONDARY, index_definitions, set_indexes

pytestmark = pytest.mark.django_db(transaction=True)

DROPPED = {"ingest_event_job_md5", "ingest_event_producer_md5", "ingest_event_pending_idx"}


def _url() -> str:
    params = connection.get_connection_params()
    keys = ("dbname", "user", "password", "host", "port")
    return make_conninfo(**{key: params[key] for key in keys if params.get(key)})


def test_a_variant_drops_its_indexes_and_main_has_them_all_again() -> None:
    url = _url()
    before = index_definitions(url)
    assert set(SECONDARY) < set(before)
    try:
        set_indexes(url, before, DROPPED)
        assert set(index_definitions(url)) == set(before) - DROPPED
    finally:
        set_indexes(url, before, set())
    assert index_definitions(url) == before


def test_a_variants_table_has_every_index_of_the_log_but_its_own() -> None:
    url = _url()
    log = index_definitions(url)
    with psycopg.connect(url, autocommit=True) as admin:
        try:
            make_variant(admin, "bench_rows_test", DROPPED)
            copied = dict(
                admin.execute(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s",
                    ("bench_rows_test",),
                ).fetchall()
            )
            options = admin.execute(
                "SELECT c.relname, c.reloptions FROM pg_class c "
                "WHERE c.relname IN ('ingest_event', 'bench_rows_test') ORDER BY c.relname"
            ).fetchall()
            # A stored row gets an id past the copied ones (the copy's sequence is its own).
            admin.execute(
                "INSERT INTO bench_rows_test (kind, payload, digest, derivation_status) "
                "VALUES ('run', '{}', '\\x00', 'pending')"
            )
        finally:
            admin.execute("DROP TABLE IF EXISTS bench_rows_test")
    renamed = {
        f"bench_rows_test_{name.removeprefix('ingest_event_')}": definition.replace(
            name, f"bench_rows_test_{name.removeprefix('ingest_event_')}"
        ).replace(" public.ingest_event ", " public.bench_rows_test ")
        for name, definition in log.items()
        if name not in DROPPED
    }
    assert copied == renamed
    assert options[0][1] == options[1][1]  # toast_tuple_target and autovacuum's alike

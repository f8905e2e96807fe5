"""The collector names datasets and the catalog normalises names: they must agree.

A namespace the collector emits has to be already normal for the catalog (or the two would
store one table under two keys), and a namespace another producer sends without its port
must normalise to the one the collector writes with the port.
"""

import pytest
from lineage_collector import naming as collector

from catalog.names import naming as catalog

# One connection URL per platform the collector names, without ports where they can be
# left out.
URLS = [
    "postgresql+psycopg://user:secret@DB.example.com/shop",
    "postgresql://db.example.com:6543/shop",
    "mysql+pymysql://user@db.example.com/shop",
    "mariadb://db.example.com/shop",
    "mssql+pyodbc://db.example.com/shop",
    "redshift+redshift_connector://user@analytics.abc123.eu-west-1.redshift.amazonaws.com/dev",
    "trino://user@trino.example.com/hive/sales",
    "snowflake://user@acme-xy12345/ANALYTICS/PUBLIC",
    "bigquery://my-project/dataset",
    "awsathena+rest://@athena.eu-west-1.amazonaws.com:443/sales",
    "sqlite:////var/data/local.db",
]


@pytest.mark.parametrize("url", URLS)
def test_the_collectors_namespaces_are_already_normal_for_the_catalog(url: str) -> None:
    namespace = collector.platform_for_url(url).namespace
    assert catalog.normalise_namespace(namespace) == namespace


@pytest.mark.parametrize(("scheme", "port"), sorted(collector.DEFAULT_PORTS.items()))
def test_both_sides_use_the_same_default_port(scheme: str, port: int) -> None:
    assert catalog.DEFAULT_PORTS.get(scheme) == port
    # Another producer's namespace without the port is the collector's with it.
    url = f"{scheme}://db.example.com/shop"
    written = collector.platform_for_url(url).namespace
    assert written == f"{scheme}://db.example.com:{port}"
    assert catalog.normalise_namespace(f"{scheme}://db.example.com") == written


def test_the_collectors_schemes_are_the_catalogs_own_spellings() -> None:
    # A scheme the catalog rewrites (s3a → s3, postgresql → postgres) would mean the
    # collector writes a spelling the catalog does not store.
    schemes = set(collector.SQL_DIALECTS)
    assert not schemes & set(catalog.SCHEME_ALIASES)
    assert collector.platform_for_url("postgresql://h/d").scheme == "postgres"

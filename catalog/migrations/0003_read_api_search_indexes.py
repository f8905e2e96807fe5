"""Indexes for the read API's search (catalog/search.py) and name-prefix filters.

Owned by the read API (docs/adr/0032). Each index serves one query branch of
``catalog.search.search_catalog``; the expressions here must stay identical to the ones in
that module or PostgreSQL will not use them.

Production: on a large existing store create these with CREATE INDEX CONCURRENTLY (outside a
transaction, e.g. by hand before deploying, then `migrate --fake` this migration's effect is
a no-op thanks to IF NOT EXISTS). On a fresh or small store the plain form below is fine.
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

INDEXES = [
    # Typo-tolerant search over every name a dataset was ever called (word_similarity <%).
    ("catalog_alias_name_trgm", "catalog_dataset_alias", "USING gin (name gin_trgm_ops)"),
    # Word search over alias namespace + name ("postgres orders" finds shop.public.orders).
    (
        "catalog_alias_words_fts",
        "catalog_dataset_alias",
        "USING gin (to_tsvector('simple', regexp_replace(namespace || ' ' || name, "
        "'[^[:alnum:]]+', ' ', 'g')))",
    ),
    # Typo-tolerant job name search; also serves /jobs?name_prefix= (LIKE 'x%').
    ("catalog_job_name_trgm", "catalog_job", "USING gin (name gin_trgm_ops)"),
    # Word search over job namespace, name and description (no stemming: one query config).
    (
        "catalog_job_words_fts",
        "catalog_job",
        "USING gin ((to_tsvector('simple', regexp_replace(namespace || ' ' || name, "
        "'[^[:alnum:]]+', ' ', 'g')) || to_tsvector('simple', description)))",
    ),
    # Dataset descriptions (English stemming).
    (
        "catalog_dataset_desc_fts",
        "catalog_dataset",
        "USING gin (to_tsvector('english', description))",
    ),
    # /datasets?name_prefix= (LIKE 'x%' on unbounded text: trigram, not btree).
    ("catalog_dataset_name_trgm", "catalog_dataset", "USING gin (name gin_trgm_ops)"),
    # Column-name search (current schema fields).
    ("catalog_field_name_trgm", "catalog_dataset_field", "USING gin (name gin_trgm_ops)"),
]


class Migration(migrations.Migration):
    dependencies = [("catalog", "0002_steward_groups")]

    operations = [
        TrigramExtension(),
        *[
            migrations.RunSQL(
                sql=f"CREATE INDEX IF NOT EXISTS {name} ON {table} {definition}",
                reverse_sql=f"DROP INDEX IF EXISTS {name}",
            )
            for name, table, definition in INDEXES
        ],
    ]

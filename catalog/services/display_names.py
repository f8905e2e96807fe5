"""Which of a dataset's names is its title (ADR 0020, amended by issue 12), and pins.

A dataset is shown (admin, graph, search, API) by one of its aliases. The rule prefers the
logical name over the storage location, deterministically and whatever the order of
events: the alias with the smallest key

    (rank, namespace, name)  where rank is
    0  pinned by a steward (``DisplayNamePin``, kept across rederives),
    1  named as a ``symlinks`` identifier of type TABLE,
    2  a catalog or database scheme (hive, trino, bigquery, snowflake, postgres, ...),
    3  anything else,
    4  a storage location (file, s3, gs, hdfs, abfss, wasbs, ...),
    5  a key the catalog facet gives (``catalog:…``, ADR 0093): never a name a producer
       used, so shown only if nothing else is known.

Ranks only fall as facts arrive (a TABLE symlink is remembered on the alias; a pin is
steward input), so the running minimum derivation keeps is the minimum over all aliases.
"""

from typing import Any

from django.db import transaction

from catalog.facets import catalog_identity
from catalog.models import Dataset, DatasetAlias, DisplayNamePin
from catalog.names.naming import key_hash
from catalog.services.audit import log_curation

PINNED, TABLE_SYMLINK, LOGICAL, OTHER, STORAGE, CATALOG_KEY = range(6)
LOGICAL_SCHEMES = frozenset(
    {
        "hive",
        "trino",
        "presto",
        "bigquery",
        "snowflake",
        "postgres",
        "mysql",
        "mariadb",
        "redshift",
        "kafka",
        "sqlserver",
        "mssql",
        "oracle",
        "db2",
        "teradata",
        "awsathena",
        "athena",
        "databricks",
        "clickhouse",
        "vertica",
        "spanner",
        "cassandra",
        "mongodb",
        "dynamodb",
        "glue",
        "iceberg",
        "table",  # the edge API's catalog.schema.table names (ADR 0022)
    }
)
STORAGE_SCHEMES = frozenset(
    {"file", "s3", "gs", "hdfs", "abfss", "abfs", "wasbs", "wasb", "dbfs", "adl", "oss", "viewfs"}
)


def scheme_rank(namespace: str) -> int:
    # Spark's local files have the bare namespace "file"; others carry "scheme://".
    if namespace.startswith(catalog_identity.PREFIX):
        return CATALOG_KEY
    scheme = namespace.split(":", 1)[0].lower()
    if scheme in LOGICAL_SCHEMES:
        return LOGICAL
    if scheme in STORAGE_SCHEMES or namespace.startswith("/"):
        return STORAGE
    return OTHER


def alias_rank(alias: DatasetAlias, pinned: bool = False) -> int:
    if pinned:
        return PINNED
    if alias.is_table_name:
        return TABLE_SYMLINK
    return scheme_rank(alias.namespace)


def display_key(alias: DatasetAlias, pinned: bool = False) -> tuple[int, str, str]:
    return alias_rank(alias, pinned), alias.namespace, alias.name


def current_key(dataset: Dataset) -> tuple[int, str, str]:
    return dataset.display_rank, dataset.namespace, dataset.name


def show_as(dataset: Dataset, alias: DatasetAlias, pinned: bool = False) -> None:
    dataset.display_rank, dataset.namespace, dataset.name = display_key(alias, pinned)


def pinned_hashes(hashes: list[bytes]) -> set[bytes]:
    """Of ``hashes`` (alias key hashes), those a steward pinned."""
    if not hashes:
        return set()
    return {
        bytes(value)
        for value in DisplayNamePin.objects.filter(key_hash__in=hashes).values_list(
            "key_hash", flat=True
        )
    }


def best_alias(aliases: list[DatasetAlias]) -> tuple[DatasetAlias, bool] | None:
    """The alias a dataset with these aliases is shown by, and whether it is pinned."""
    if not aliases:
        return None
    pins = pinned_hashes([bytes(alias.key_hash) for alias in aliases])
    chosen = min(aliases, key=lambda alias: display_key(alias, bytes(alias.key_hash) in pins))
    return chosen, bytes(chosen.key_hash) in pins


def refresh_display_name(dataset: Dataset) -> None:
    """Recompute ``dataset``'s title from all its aliases (after a pin or unpin)."""
    found = best_alias(list(DatasetAlias.objects.filter(dataset_id=dataset.id)))
    if found is not None:
        show_as(dataset, *found)
        dataset.save(update_fields=["namespace", "name", "display_rank", "updated_at"])


def pin_display_name(user: Any, alias: DatasetAlias) -> Dataset:
    """A steward's choice: ``alias`` is its dataset's title, now and after any rederive.

    The dataset's other pins are removed (one title per dataset); the pin is keyed by the
    alias's name, so it holds wherever derivation puts that name later.
    """
    with transaction.atomic():
        # The alias read again under its lock, then its dataset's (derivation's order,
        # derivation/locks.py): a merge committed since the caller read it moved it, and
        # the stale dataset was titled by a name no alias of it had (or was gone: a 500).
        current = (
            DatasetAlias.objects.select_for_update(no_key=True)
            .filter(pk=alias.pk)
            .values_list("dataset_id", flat=True)
            .first()
        )
        if current is None:
            raise ValueError("this alias has no dataset")
        alias.dataset_id = current
        dataset = Dataset.objects.select_for_update().get(id=current)
        siblings = DatasetAlias.objects.filter(dataset_id=dataset.id).values("key_hash")
        DisplayNamePin.objects.filter(key_hash__in=siblings).delete()
        DisplayNamePin.objects.create(
            namespace=alias.namespace,
            name=alias.name,
            key_hash=key_hash(alias.namespace, alias.name),
            created_by=user if getattr(user, "pk", None) else None,
        )
        show_as(dataset, alias, pinned=True)
        dataset.save(update_fields=["namespace", "name", "display_rank", "updated_at"])
        log_curation(user, dataset, f"pinned the display name {alias.namespace} {alias.name}")
    return dataset


def unpin_display_name(user: Any, dataset: Dataset) -> Dataset | None:
    """Remove a dataset's pin: its title follows the rule again. None when the dataset is
    gone since the caller read it (a merge or a purge took it: nothing to unpin; a ``get``
    was a 500 on the steward's page)."""
    with transaction.atomic():
        locked = Dataset.objects.select_for_update().filter(id=dataset.id).first()
        if locked is None:
            return None
        siblings = DatasetAlias.objects.filter(dataset_id=locked.id).values("key_hash")
        DisplayNamePin.objects.filter(key_hash__in=siblings).delete()
        refresh_display_name(locked)
        log_curation(user, locked, "removed the pinned display name")
    return locked

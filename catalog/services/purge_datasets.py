"""The datasets a namespace purge leaves standing, rebuilt from the events they keep (ADR 0167).

A dataset with a name outside the purged namespace survives the purge; but an event the
purge removes (of a job of it, or of another namespace's job that also named it) may have
named the dataset too and given it facts: its facets (schema, documentation, owners, tags,
column lineage...) and their projections (fields, description, browse path, tags, owners,
lifecycle), its aliases' first and last sightings and reasons, their schema versions and
the schema changes between them, and the names only such events called it. Derivation only
ever adds (a facet is kept by its greatest version), so deriving the kept events again on
top of what is there keeps what the removed events said.

So each such dataset is emptied of what events gave it and its kept events are set pending,
in one transaction per batch of datasets, like the other namespaces' rebuilt jobs (ADR 0078,
0158): what the retained summaries say of its aliases (ADR 0079) is folded back in at once,
and the purge derives the kept events again at its end (or the sweep does, if it stops).
A name of it that no kept event nor retained summary names goes, and a dataset left with
no name goes with it.
"""

from collections.abc import Callable
from typing import Any

from django.db import connection, transaction

from catalog.models import (
    Dataset,
    DatasetAlias,
    DatasetChange,
    RetainedAlias,
    SchemaVersion,
)
from catalog.services import display_names, labels
from catalog.services.derivation.datasets import DATASET_FIELDS, project_facets, refresh_fields
from catalog.services.derivation.jobs_runs import merge_facets
from catalog.services.derivation.locks import locked
from catalog.services.derivation.records import REASON_RANK, earliest, latest
from catalog.services.purge_lists import IdList
from ingest import derivation_status

# Datasets the removed events named (params: {"ns": the purged dataset namespace}) that keep
# a name outside it: those with none left are the purge's to delete (ADR 0078).
_TOUCHED = """SELECT DISTINCT a.dataset_id FROM {purged} p
JOIN catalog_event_dataset ed ON ed.event_id = p.id
JOIN catalog_dataset_alias a ON a.id = ed.alias_id
WHERE a.dataset_id IS NOT NULL AND EXISTS (SELECT FROM catalog_dataset_alias o
  WHERE o.dataset_id = a.dataset_id AND o.namespace <> %(ns)s)"""
# The events some datasets keep (params: {"datasets": ids}): those naming any of their
# aliases, less those the purge removes.
_KEPT = """SELECT DISTINCT ed.event_id AS id FROM catalog_dataset_alias a
JOIN catalog_event_dataset ed ON ed.alias_id = a.id
WHERE a.dataset_id = ANY(%(datasets)s)
  AND NOT EXISTS (SELECT FROM {purged} p WHERE p.id = ed.event_id)"""
# Their aliases outside the namespace that only removed events named: no kept event, no
# retained summary (ADR 0079) says the name.
_ONLY_PURGED = """SELECT a.id FROM catalog_dataset_alias a
WHERE a.dataset_id = ANY(%(datasets)s) AND a.namespace <> %(ns)s
  AND EXISTS (SELECT FROM catalog_event_dataset ed WHERE ed.alias_id = a.id)
  AND NOT EXISTS (SELECT FROM catalog_event_dataset ed WHERE ed.alias_id = a.id
    AND NOT EXISTS (SELECT FROM {purged} p WHERE p.id = ed.event_id))
  AND NOT EXISTS (SELECT FROM catalog_retained_alias r WHERE r.key_hash = a.key_hash)
ORDER BY a.id"""
# Greater than any reason's [rank, eventTime, digest]: the first fact derived wins it.
_NO_REASON = [max(REASON_RANK.values()) + 1]

_ALIAS_FIELDS = [
    "first_seen",
    "last_seen",
    "reason",
    "reason_detail",
    "reason_version",
    "is_table_name",
]

Delete = Callable[[type[Any], list[Any]], None]


def find(purged: IdList, namespace: str) -> IdList:
    """The datasets the removed events named that keep a name outside ``namespace``."""
    touched = IdList("touched")
    touched.fill(_TOUCHED.format(purged=purged.table), {"ns": namespace})
    return touched


def count(purged: IdList, touched: IdList, namespace: str, keep: IdList, size: int) -> int:
    """For a dry run (nothing changes): add the events the datasets keep to ``keep``;
    returns how many of their names would go."""
    names = 0
    for datasets in touched.batches(size):
        params: dict[str, Any] = {"datasets": datasets, "ns": namespace}
        keep.fill(_KEPT.format(purged=purged.table), params)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM ({_ONLY_PURGED.format(purged=purged.table)}) a", params
            )
            names += int(cursor.fetchone()[0])
    return names


def rebuild(
    purged: IdList, touched: IdList, namespace: str, keep: IdList, delete: Delete, size: int
) -> None:
    """Empty the ``touched`` datasets of what events gave them, ``size`` datasets a
    transaction, their kept events set pending (and added to ``keep``) in the same one;
    ``delete`` deletes the names only removed events gave them, and a dataset left
    without a name."""
    for datasets in touched.batches(size):
        with transaction.atomic():
            _rebuild_batch(purged, datasets, namespace, keep, delete, size)


def _rebuild_batch(
    purged: IdList,
    datasets: list[int],
    namespace: str,
    keep: IdList,
    delete: Delete,
    size: int,
) -> None:
    # Derivation's lock order: the aliases, then their datasets (derivation/locks.py).
    list(locked(DatasetAlias.objects.filter(dataset_id__in=datasets)).values_list("pk"))
    rows = {dataset.pk: dataset for dataset in locked(Dataset.objects.filter(pk__in=datasets))}
    params: dict[str, Any] = {"datasets": datasets, "ns": namespace}
    kept_events = _KEPT.format(purged=purged.table)
    keep.fill(kept_events, params)
    with connection.cursor() as cursor:
        # All of them, those an earlier batch listed too: the sweep may have derived one
        # since, onto a dataset of this batch that is emptied now.
        derivation_status.reset_selected(cursor, kept_events, params)
        cursor.execute(_ONLY_PURGED.format(purged=purged.table), params)
        only_purged = [row[0] for row in cursor.fetchall()]
    for start in range(0, len(only_purged), size):
        delete(DatasetAlias, only_purged[start : start + size])
    aliases = list(DatasetAlias.objects.filter(dataset_id__in=datasets))
    named = {alias.dataset_id for alias in aliases if alias.dataset_id is not None}
    nameless = sorted(set(rows) - named)
    if nameless:
        delete(Dataset, nameless)
    alias_ids = [alias.pk for alias in aliases]
    SchemaVersion.objects.filter(alias_id__in=alias_ids).delete()
    DatasetChange.objects.filter(alias_id__in=alias_ids).delete()  # schema changes only
    retained = {
        bytes(row.key_hash): row
        for row in RetainedAlias.objects.filter(key_hash__in=[a.key_hash for a in aliases])
    }
    kept = [rows[pk] for pk in sorted(named)]
    for dataset in kept:
        _empty(dataset)
    by_id = {dataset.pk: dataset for dataset in kept}
    for alias in aliases:
        # The namespace's own summaries go with it (ADR 0079's rows, purge._retained_rows).
        mine = alias.namespace == namespace
        _refold(
            alias, by_id[alias.dataset_id], None if mine else retained.get(bytes(alias.key_hash))
        )
    DatasetAlias.objects.bulk_update(aliases, _ALIAS_FIELDS)
    steward = labels.dataset_labels(by_id)
    pins = display_names.pinned_hashes([bytes(alias.key_hash) for alias in aliases])
    for dataset in kept:
        project_facets(dataset)
        labels.project(dataset, steward.get(dataset.pk, []))
        # Shown by the name that sorts first now: the one it was shown by may have gone,
        # or ranked as a TABLE symlink only a removed event said it was.
        display_names.show_as(
            dataset,
            *min(
                (
                    (alias, bytes(alias.key_hash) in pins)
                    for alias in aliases
                    if alias.dataset_id == dataset.pk
                ),
                key=lambda pair: display_names.display_key(*pair),
            ),
        )
    Dataset.objects.bulk_update(kept, [f for f in DATASET_FIELDS if f != "updated_at"])
    refresh_fields(kept)


def _empty(dataset: Dataset) -> None:
    """What events gave the dataset, gone (its name is set from its aliases after)."""
    dataset.facets, dataset.facet_versions = {}, {}
    dataset.description, dataset.browse_path = "", ""
    dataset.lifecycle_state, dataset.lifecycle_changed_at, dataset.is_dropped = "", None, False
    dataset.first_seen = dataset.last_seen = None


def _refold(alias: DatasetAlias, dataset: Dataset, retained: RetainedAlias | None) -> None:
    """The alias as no event derived yet (the first fact derived sets its reason), with
    what retention kept of it folded back in, into its dataset too (ADR 0079)."""
    alias.first_seen = alias.last_seen = None
    alias.reason_version, alias.is_table_name = _NO_REASON, False
    if retained is not None:
        alias.first_seen, alias.last_seen = retained.first_seen, retained.last_seen
        alias.is_table_name = retained.is_table_name
        if retained.reason_version:
            alias.reason, alias.reason_detail = retained.reason, retained.reason_detail
            alias.reason_version = list(retained.reason_version)
        # Each facet with its version, as ``retained.retained_facts`` reads them.
        versions = retained.facet_versions
        merge_facets(
            dataset.facets,
            dataset.facet_versions,
            {
                key: (tuple(versions[key]), value)
                for key, value in retained.facets.items()
                if key in versions
            },
        )
    dataset.first_seen = earliest(dataset.first_seen, alias.first_seen)
    dataset.last_seen = latest(dataset.last_seen, alias.last_seen)

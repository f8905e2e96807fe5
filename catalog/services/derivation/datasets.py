"""Aliases, their equivalences, datasets (grouping and deterministic merges), facets, fields.

Each alias belongs to exactly one dataset; aliases linked by a symlink, a rename or a rule
belong to the same one. Grouping is a union: links are only ever added (a rederive starts
from none), so the final grouping is the connected components of all links, whatever the
order. A dataset's display name, and the survivor of a merge, is its alias with the
smallest (rank, namespace, name) (catalog.services.display_names: pinned, TABLE symlink, catalog
scheme, other, storage location): the same whatever the order of events (ADR 0020).
"""

from typing import Any

from django.db import connection, models

from catalog.facets import documentation, hierarchy, lifecycle_state_change, schema
from catalog.models import (
    AliasLink,
    ColumnLineageEdge,
    Dataset,
    DatasetAlias,
    DatasetField,
    LineageEdge,
    LineageEdgeRun,
    RememberedKind,
)
from catalog.names.naming import key_hash, producer_text
from catalog.services import display_names, labels
from catalog.services.derivation.jobs_runs import merge_facets
from catalog.services.derivation.locks import (
    bulk_update,
    ids_by_key_hash,
    locked,
    write_facets_if_changed,
)
from catalog.services.derivation.records import AliasKey, Facts, earliest, latest
from catalog.services.derivation.remembered import remembered, remembered_dataset_ids
from core.timestamps import parse_timestamp

ALIAS_FIELDS = [
    "dataset",
    "reason",
    "reason_event",
    "reason_rule",
    "reason_detail",
    "reason_version",
    "is_table_name",
    "first_seen",
    "last_seen",
]
DATASET_FIELDS = [
    "namespace",
    "name",
    "display_rank",
    "facets",
    "facet_versions",
    "description",
    "browse_path",
    "tags",
    "owners",
    "lifecycle_state",
    "lifecycle_changed_at",
    "is_dropped",
    "first_seen",
    "last_seen",
    "updated_at",
]


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, item: int) -> int:
        self.parent.setdefault(item, item)
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[max(root_a, root_b)] = min(root_a, root_b)


def ensure_aliases(facts: Facts) -> dict[AliasKey, int]:
    """Insert the aliases the batch names that do not exist yet; returns key → id.

    No row lock (an alias's id never changes): the batch's facts can point at the aliases
    in its free part; ``derive_aliases`` locks them later to fold the batch in.
    """

    def build(digest: bytes, key: AliasKey) -> DatasetAlias:
        fact = facts.aliases[key]
        (rank, time, event_digest), reason, event_id, rule_id, detail = fact.reason
        return DatasetAlias(
            namespace=key[0],
            name=key[1],
            key_hash=digest,
            reason=reason,
            reason_event_id=event_id,
            reason_rule_id=rule_id,
            reason_detail=detail,
            reason_version=[rank, time, event_digest],
            first_seen=fact.first_seen,
            last_seen=fact.last_seen,
        )

    return ids_by_key_hash(DatasetAlias, {key_hash(*key): key for key in facts.aliases}, build)


def derive_aliases(
    facts: Facts, ids: dict[AliasKey, int] | None = None
) -> tuple[dict[AliasKey, DatasetAlias], set[int]]:
    """Lock the batch's aliases (inserted by ``ensure_aliases`` unless ``ids`` is given),
    fold the batch in, link them, group them into datasets.

    Returns (alias key → locked alias, ids of runs whose edges must be recomputed because
    a dataset they touched was merged away).
    """
    if not facts.aliases:
        return {}, set()
    if ids is None:
        ids = ensure_aliases(facts)
    keys = {alias_id: key for key, alias_id in ids.items()}
    aliases = {
        keys[alias.id]: alias for alias in locked(DatasetAlias.objects.filter(id__in=list(keys)))
    }
    for key, alias in aliases.items():
        fact = facts.aliases[key]
        (rank, time, event_digest), reason, event_id, rule_id, detail = fact.reason
        if [rank, time, event_digest] < alias.reason_version:
            alias.reason, alias.reason_detail = reason, detail
            alias.reason_event_id, alias.reason_rule_id = event_id, rule_id
            alias.reason_version = [rank, time, event_digest]
        alias.first_seen = earliest(alias.first_seen, fact.first_seen)
        alias.last_seen = latest(alias.last_seen, fact.last_seen)
        alias.is_table_name = alias.is_table_name or key in facts.table_names

    _store_links(facts, aliases)
    recompute_runs = _group(facts, aliases)
    bulk_update(list(aliases.values()), ALIAS_FIELDS)
    return aliases, recompute_runs


def _store_links(facts: Facts, aliases: dict[AliasKey, DatasetAlias]) -> None:
    rows: dict[tuple[int, int], AliasLink] = {}
    for (a, b), (reason, event_id, rule_id) in facts.links.items():
        first, second = sorted((aliases[a].id, aliases[b].id))
        rows.setdefault(
            (first, second),
            AliasLink(
                alias_a_id=first,
                alias_b_id=second,
                reason=reason,
                reason_event_id=event_id,
                reason_rule_id=rule_id,
            ),
        )
    if rows:
        AliasLink.objects.bulk_create([rows[pair] for pair in sorted(rows)], ignore_conflicts=True)


def _group(facts: Facts, aliases: dict[AliasKey, DatasetAlias]) -> set[int]:
    """Give every alias a dataset; merge datasets that links join. Returns runs to redo."""
    union = _UnionFind()
    for alias in aliases.values():
        union.find(alias.id)
    for a, b in facts.links:
        union.union(aliases[a].id, aliases[b].id)
    components: dict[int, list[DatasetAlias]] = {}
    for alias in aliases.values():
        components.setdefault(union.find(alias.id), []).append(alias)

    pins = display_names.pinned_hashes([bytes(alias.key_hash) for alias in aliases.values()])

    def title(alias: DatasetAlias) -> tuple[int, str, str]:
        return display_names.display_key(alias, bytes(alias.key_hash) in pins)

    dataset_ids = {alias.dataset_id for alias in aliases.values() if alias.dataset_id}
    datasets = {
        dataset.id: dataset for dataset in locked(Dataset.objects.filter(id__in=dataset_ids))
    }
    created = []
    for members in components.values():
        if not any(alias.dataset_id for alias in members):
            first = min(members, key=title)
            dataset = Dataset()
            display_names.show_as(dataset, first, bytes(first.key_hash) in pins)
            created.append((dataset, members))
    if created:
        _give_remembered_ids(created)
        Dataset.objects.bulk_create([dataset for dataset, _ in created])
        for dataset, members in created:
            datasets[dataset.id] = dataset
            for alias in members:
                alias.dataset_id = dataset.id

    recompute_runs: set[int] = set()
    merged: set[int] = set()
    # Only a merge asks which datasets hold remembered ids (a rederive under way).
    owned = [
        {alias.dataset_id for alias in members if alias.dataset_id is not None}
        for members in components.values()
    ]
    merging = sorted({dataset_id for ids in owned if len(ids) > 1 for dataset_id in ids})
    kept = remembered_dataset_ids(merging) if merging else set()
    for members in components.values():
        # ADR 0020's survivor, but during a full rederive the dataset with the smallest
        # remembered id survives, so the identity ends with the id it had (ADR 0077).
        owners = sorted(
            {datasets[alias.dataset_id] for alias in members if alias.dataset_id},
            key=lambda dataset: (
                dataset.id not in kept,
                dataset.id if dataset.id in kept else 0,
                *display_names.current_key(dataset),
                dataset.id,
            ),
        )
        survivor = owners[0]
        for alias in members:
            if alias.dataset_id is None:
                alias.dataset_id = survivor.id
        for loser in owners[1:]:
            recompute_runs |= merge_datasets(survivor, loser)
            merged.add(survivor.id)
            for alias in aliases.values():
                if alias.dataset_id == loser.id:
                    alias.dataset_id = survivor.id
            del datasets[loser.id]
        for alias in members:
            if title(alias) < display_names.current_key(survivor):
                display_names.show_as(survivor, alias, bytes(alias.key_hash) in pins)
    facts_by_dataset: dict[int, list[AliasKey]] = {}
    for key, alias in aliases.items():
        assert alias.dataset_id is not None  # every alias was given a dataset above
        facts_by_dataset.setdefault(alias.dataset_id, []).append(key)
    _merge_dataset_facts(facts, aliases, datasets, facts_by_dataset, merged)
    return recompute_runs


def _give_remembered_ids(created: list[tuple[Dataset, list[DatasetAlias]]]) -> None:
    """Give each new dataset the smallest id its aliases' identity had before a full
    rederive (ADR 0077), unless a dataset holds it already (a steward's split, or the same
    identity's other aliases not linked yet: the merge that links them keeps that id)."""
    kept = remembered(
        RememberedKind.DATASET,
        [bytes(alias.key_hash) for _, members in created for alias in members],
    )
    if not kept:
        return
    wanted = sorted(set(kept.values()))
    # Two batches may create datasets for the same identity at once (its aliases not linked
    # yet): a transaction lock per remembered id, taken in id order, lets one have the id.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('catalog_dataset ' || i::text, 1228))"
            " FROM unnest(%s::bigint[]) WITH ORDINALITY AS t(i, n) ORDER BY n",
            [wanted],
        )
    taken = set(Dataset.objects.filter(id__in=wanted).values_list("id", flat=True))
    for dataset, members in created:
        free = {kept[bytes(alias.key_hash)] for alias in members if bytes(alias.key_hash) in kept}
        free -= taken
        if free:
            dataset.id = min(free)
            taken.add(dataset.id)


def merge_datasets(survivor: Dataset, loser: Dataset) -> set[int]:
    """Fold ``loser`` into ``survivor`` (both locked) and delete it.

    Aliases are repointed; facets merged per key by version; the aggregates that pointed at
    the loser (edges, column edges, fields) are deleted and the ids of the runs whose
    edges must be recomputed are returned. Facts point at aliases, so nothing else moves.
    """
    merge_facets(survivor.facets, survivor.facet_versions, _versioned(loser))
    survivor.first_seen = earliest(survivor.first_seen, loser.first_seen)
    survivor.last_seen = latest(survivor.last_seen, loser.last_seen)
    if display_names.current_key(loser) < display_names.current_key(survivor):
        survivor.display_rank = loser.display_rank
        survivor.namespace, survivor.name = loser.namespace, loser.name
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE catalog_dataset_alias SET dataset_id = %s WHERE dataset_id = %s RETURNING id",
            [survivor.id, loser.id],
        )
        alias_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            """
            SELECT run_id FROM catalog_run_dataset WHERE alias_id = ANY(%s)
            UNION SELECT run_id FROM catalog_column_lineage_fact
            WHERE target_alias_id = ANY(%s) OR source_alias_id = ANY(%s)
            """,
            [alias_ids, alias_ids, alias_ids],
        )
        runs = {row[0] for row in cursor.fetchall()}
    edges = LineageEdge.objects.filter(source_id=loser.id) | LineageEdge.objects.filter(
        target_id=loser.id
    )
    LineageEdgeRun.objects.filter(edge__in=edges).delete()
    edges.delete()
    (
        ColumnLineageEdge.objects.filter(source_id=loser.id)
        | ColumnLineageEdge.objects.filter(target_id=loser.id)
    ).delete()
    DatasetField.objects.filter(dataset_id=loser.id).delete()
    Dataset.objects.filter(id=loser.id).delete()
    return runs


def _versioned(dataset: Dataset) -> dict[str, Any]:
    return {
        key: (tuple(dataset.facet_versions[key]), value)
        for key, value in dataset.facets.items()
        if key in dataset.facet_versions
    }


def _merge_dataset_facts(
    facts: Facts,
    aliases: dict[AliasKey, DatasetAlias],
    datasets: dict[int, Dataset],
    keys_by_dataset: dict[int, list[AliasKey]],
    merged: set[int],
) -> None:
    schema_changed = [
        datasets[dataset_id] for dataset_id in sorted(merged) if dataset_id in datasets
    ]
    facets_changed = set(merged)
    steward_labels = labels.dataset_labels(
        keys_by_dataset,
        {
            bytes(aliases[key].key_hash): dataset_id
            for dataset_id, keys in keys_by_dataset.items()
            for key in keys
        },
    )
    for dataset_id, keys in keys_by_dataset.items():
        dataset = datasets[dataset_id]
        for key in keys:
            alias = aliases[key]
            dataset.first_seen = earliest(dataset.first_seen, alias.first_seen)
            dataset.last_seen = latest(dataset.last_seen, alias.last_seen)
            new = facts.dataset_facets.get(key)
            if new:
                changed = merge_facets(dataset.facets, dataset.facet_versions, new)
                if changed:
                    facets_changed.add(dataset_id)
                if schema.NAME in changed and dataset not in schema_changed:
                    schema_changed.append(dataset)
        project_facets(dataset)
        # Written with the row's other projections (not a facets change).
        labels.project(dataset, steward_labels.get(dataset_id, []))
    write_facets_if_changed(list(datasets.values()), facets_changed, DATASET_FIELDS)
    refresh_fields(schema_changed)


def project_facets(dataset: Dataset) -> None:
    """Set the columns read from ``dataset``'s facets: its description, browse path and
    lifecycle (its tags and owners are ``labels.project``'s, its fields ``refresh_fields``')."""
    description = documentation.description(dataset.facets)
    if description is not None:
        # Producer text shown and searched: stored redacted (ADR 0056).
        dataset.description = producer_text(description)
    dataset.browse_path = producer_text(hierarchy.browse_key(dataset.facets), hierarchy.KEY_LIMIT)
    state = lifecycle_state_change.state(dataset.facets)
    if state is not None:
        dataset.lifecycle_state = producer_text(state, 16)
        dataset.lifecycle_changed_at = parse_timestamp(
            dataset.facet_versions[lifecycle_state_change.NAME][0]
        )
        dataset.is_dropped = dataset.lifecycle_state == lifecycle_state_change.DROP


def refresh_fields(datasets: list[Dataset]) -> None:
    """Replace the fields of ``datasets`` by those of their current schema facet."""
    if not datasets:
        return
    DatasetField.objects.filter(dataset__in=[dataset.id for dataset in datasets]).delete()
    rows = []
    for dataset in datasets:
        for ordinal, (name, type_, description) in enumerate(schema.flattened(dataset.facets)):
            rows.append(
                DatasetField(
                    dataset_id=dataset.id,
                    ordinal=ordinal,
                    name=name,
                    type=type_,
                    description=description,
                )
            )
    DatasetField.objects.bulk_create(rows)


def lock_for_split(alias_id: int) -> int | None:
    """Lock the alias and its dataset, in ``detach_alias``'s order, for the rest of the
    caller's transaction; the dataset's id when it has another name (the alias can be split
    off), None when the alias is its only name or is gone."""
    alias = locked(DatasetAlias.objects.filter(id=alias_id)).first()
    if alias is None or alias.dataset_id is None:
        return None
    locked(Dataset.objects.filter(id=alias.dataset_id)).get()
    others = DatasetAlias.objects.filter(dataset_id=alias.dataset_id).exclude(id=alias_id)
    return alias.dataset_id if others.exists() else None


def detach_alias(alias_id: int) -> set[int]:
    """Move an alias out of its dataset into a dataset of its own (a steward's split).

    The caller has stored the detach rule that keeps derivation from joining it again. The
    new dataset starts from the alias's own name and times; the old one keeps the alias
    that now sorts first as its name and forgets its facets (some came through this
    alias): re-deriving the events of both datasets' aliases (the caller's job) rebuilds
    them as a full rederive would. Returns the runs whose edges must be recomputed (every
    run that read or wrote the alias).
    """
    alias = locked(DatasetAlias.objects.filter(id=alias_id)).first()
    if alias is None or alias.dataset_id is None:
        return set()
    old = locked(Dataset.objects.filter(id=alias.dataset_id)).get()
    others = DatasetAlias.objects.filter(dataset_id=old.id).exclude(id=alias.id)
    best_other = display_names.best_alias(list(others))
    if best_other is None:
        return set()  # already alone
    new = Dataset(first_seen=alias.first_seen, last_seen=alias.last_seen)
    own = display_names.best_alias([alias])
    assert own is not None
    display_names.show_as(new, *own)
    new.save()
    DatasetAlias.objects.filter(id=alias.id).update(dataset_id=new.id)
    AliasLink.objects.filter(alias_a_id=alias.id).delete()
    AliasLink.objects.filter(alias_b_id=alias.id).delete()
    spans = others.aggregate(first=models.Min("first_seen"), last=models.Max("last_seen"))
    display_names.show_as(old, *best_other)
    old.first_seen, old.last_seen = spans["first"], spans["last"]
    old.facets, old.facet_versions, old.description, old.browse_path = {}, {}, "", ""
    old.lifecycle_state, old.lifecycle_changed_at, old.is_dropped = "", None, False
    old.save()
    refresh_fields([old, new])
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT run_id FROM catalog_run_dataset WHERE alias_id = %s
            UNION SELECT run_id FROM catalog_column_lineage_fact
            WHERE target_alias_id = %s OR source_alias_id = %s
            """,
            [alias.id, alias.id, alias.id],
        )
        return {row[0] for row in cursor.fetchall()}

"""Which datasets a subscription covers: its namespaces, its datasets (by name), and what is
downstream of its roots, found by the impact walk (``catalog.lineage.impact``), bounded by
its depth and ``MAX_DOWNSTREAM`` items per root.

A steward writes names as producers send them; the catalog stores them normalised and
rewritten (docs/derivation.md, "Names"). So a name is looked up as every lookup by a name is
(``alias_key``: normalised, the rules in force applied, hashed), as well as exactly as
written, and a namespace matches written or normalised: ``postgresql://db`` covers what is
stored under ``postgres://db:5432`` (and a job's namespace, kept as sent, as written).
"""

from dataclasses import dataclass, field

from catalog.lineage import impact
from catalog.models import AliasRule, DatasetAlias, WebhookSubscription
from catalog.names.naming import normalise_namespace
from catalog.names.rules import alias_key

MAX_DOWNSTREAM = 1_000


@dataclass
class Scope:
    everything: bool
    namespaces: set[str] = field(default_factory=set)
    dataset_ids: set[int] = field(default_factory=set)

    def covers(self, namespace: str | None, dataset_id: int | None) -> bool:
        if self.everything:
            return True
        return (namespace is not None and namespace in self.namespaces) or (
            dataset_id is not None and dataset_id in self.dataset_ids
        )


def _pairs(value: object) -> list[tuple[str, str]]:
    if not isinstance(value, list):
        return []
    return [
        (str(item[0]), str(item[1]))
        for item in value
        if isinstance(item, list | tuple) and len(item) == 2
    ]


def resolve(subscriptions: list[WebhookSubscription]) -> dict[int, Scope]:
    """Each subscription's scope by its id: three queries for the named datasets (as
    written, the rules, under their keys), one walk per downstream root and depth."""
    names = {
        pair
        for subscription in subscriptions
        for pair in _pairs(subscription.datasets) + _pairs(subscription.downstream_of)
    }
    found = _datasets_named(names)
    walked: dict[tuple[int, int], set[int]] = {}
    answer = {}
    for subscription in subscriptions:
        written = {str(namespace) for namespace in subscription.namespaces or []}
        namespaces = written | {normalise_namespace(namespace) for namespace in written}
        datasets = _pairs(subscription.datasets)
        roots = _pairs(subscription.downstream_of)
        if not (namespaces or datasets or roots):
            answer[subscription.pk] = Scope(everything=True)
            continue
        ids = {dataset for pair in datasets for dataset in found.get(pair, set())}
        for pair in roots:
            for root in found.get(pair, set()):
                depth = max(1, min(20, subscription.downstream_depth))
                if (root, depth) not in walked:
                    walked[(root, depth)] = _downstream(root, depth)
                ids |= walked[(root, depth)]
        answer[subscription.pk] = Scope(False, namespaces, ids)
    return answer


def _datasets_named(names: set[tuple[str, str]]) -> dict[tuple[str, str], set[int]]:
    """The datasets each (namespace, name) names: stored exactly so, or under its key."""
    found: dict[tuple[str, str], set[int]] = {}
    if not names:
        return found
    exact = DatasetAlias.objects.filter(
        namespace__in={namespace for namespace, _ in names},
        name__in={name for _, name in names},
        dataset_id__isnull=False,
    ).values_list("namespace", "name", "dataset_id")
    for namespace, name, dataset_id in exact:
        if (namespace, name) in names:
            found.setdefault((namespace, name), set()).add(dataset_id)
    rules = AliasRule.objects.rule_set()
    keyed: dict[bytes, list[tuple[str, str]]] = {}
    for pair in names:
        keyed.setdefault(alias_key(*pair, rules), []).append(pair)
    stored = DatasetAlias.objects.filter(key_hash__in=list(keyed), dataset_id__isnull=False)
    for key, dataset_id in stored.values_list("key_hash", "dataset_id"):
        for pair in keyed[bytes(key)]:
            found.setdefault(pair, set()).add(dataset_id)
    return found


def _downstream(root: int, depth: int) -> set[int]:
    """The root and the datasets downstream of it, at most ``depth`` hops away."""
    report = impact.report(
        impact.ImpactRequest(dataset_id=root, depth=depth, max_items=MAX_DOWNSTREAM)
    )
    return {root} | {item.node for item in report.items if item.type != "job"}

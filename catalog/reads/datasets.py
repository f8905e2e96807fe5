"""Datasets: by any alias, by page; the detail's and column lineage's reads. (A graph's
datasets' fields and newest writes: ``catalog.reads.marquez_graph``.)"""

from typing import Any

from catalog.models import DATASETS_BY_NAME, Dataset, DatasetField
from catalog.names import naming
from catalog.reads.counting import Page, offset_page
from core.prepared import read_cursor


def find_dataset(namespace: str, name: str) -> Dataset | None:
    """The dataset any (namespace, name) it was ever called resolves to (rules applied)."""
    return Dataset.objects.current().for_alias(namespace, name).first()


def dataset_page(namespace: str, offset: int, limit: int) -> Page[Dataset]:
    """A namespace's datasets by name, as Marquez lists them (``DatasetDao.findAll``: ORDER
    BY name), under the normalised namespace (s3a://lake/ is s3://lake)."""
    queryset = Dataset.objects.current().filter(namespace=naming.normalise_namespace(namespace))
    return offset_page(queryset, DATASETS_BY_NAME, offset, limit)


def names_and_field_types(
    dataset_ids: list[int],
) -> tuple[dict[int, tuple[str, str]], dict[tuple[int, str], str]]:
    """The datasets' (namespace, name) and their fields' types by (dataset, field)."""
    names = {
        row[0]: (row[1], row[2])
        for row in Dataset.objects.filter(id__any=dataset_ids).values_list(
            "id", "namespace", "name"
        )
    }
    types = {
        (row[0], row[1]): row[2]
        for row in DatasetField.objects.filter(dataset_id__any=dataset_ids).values_list(
            "dataset_id", "name", "type"
        )
    }
    return names, types


# Each direction's links to the dataset's aliases, in (job, link) order up to %(limit)s,
# with the job's names and its job edge's run counts (0 without an edge). The aliases are
# the dataset's, found by it: keyed by the dataset alone, the statement is prepared, and its
# generic plan is the custom one (the alias table's dataset index, then the link table's
# alias index per alias, sorted). Given the aliases as an array, the generic plan read a
# direction's whole unique index in job order (ADR 0119).
_JOB_LINKS = """
SELECT l.direction, l.job_id, j.namespace, j.name, l.declared, l.first_seen, l.last_seen,
       COALESCE(e.run_count, 0), COALESCE(e.completed_run_count, 0)
FROM (
    (SELECT 0 AS part, id, direction, job_id, declared, first_seen, last_seen
     FROM catalog_job_dataset WHERE direction = 'output' AND alias_id IN (
         SELECT a.id FROM catalog_dataset_alias a WHERE a.dataset_id = %(dataset)s::bigint)
     ORDER BY job_id, id LIMIT %(limit)s::bigint)
    UNION ALL
    (SELECT 1, id, direction, job_id, declared, first_seen, last_seen
     FROM catalog_job_dataset WHERE direction = 'input' AND alias_id IN (
         SELECT a.id FROM catalog_dataset_alias a WHERE a.dataset_id = %(dataset)s::bigint)
     ORDER BY job_id, id LIMIT %(limit)s::bigint)
) l
JOIN catalog_job j ON j.id = l.job_id
LEFT JOIN catalog_job_edge e
  ON e.job_id = l.job_id AND e.dataset_id = %(dataset)s::bigint AND e.direction = l.direction
ORDER BY l.part, l.job_id, l.id
"""


def job_links(dataset_id: int, limit: int) -> dict[str, list[tuple[Any, ...]]]:
    """The jobs' links to the dataset's aliases by direction ("output", "input"), at most
    ``limit`` each in (job, link) order: (job id, namespace, name, declared, first_seen,
    last_seen, the job edge's ``run_count`` and ``completed_run_count``, 0 without one). One
    statement where the ORM took three: the dataset detail's statements are each a round
    trip and a plan, which cost more than their execution (ADR 0105); prepared on a kept
    connection (ADR 0124)."""
    links: dict[str, list[tuple[Any, ...]]] = {"output": [], "input": []}
    with read_cursor() as cursor:
        cursor.execute(_JOB_LINKS, {"dataset": dataset_id, "limit": limit})
        for direction, *row in cursor.fetchall():
            links[direction].append(tuple(row))
    return links


# The dataset's aliases (name order, each with its rule's slug) and its schema fields
# (schema order), as one statement: part 0 the aliases, part 1 the fields.
_ALIASES_AND_FIELDS = """
SELECT part, id, namespace, name, reason, reason_detail, reason_event_id, slug, first_seen,
       last_seen
FROM (
    SELECT 0 AS part, a.id, a.namespace, a.name, a.reason, a.reason_detail, a.reason_event_id,
           r.slug, a.first_seen, a.last_seen, a.namespace AS k1, a.name AS k2, a.id AS k3
    FROM catalog_dataset_alias a LEFT JOIN catalog_alias_rule r ON r.id = a.reason_rule_id
    WHERE a.dataset_id = %(dataset)s::bigint
    UNION ALL
    SELECT 1, f.ordinal, f.name, f.type, f.description, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           f.ordinal
    FROM catalog_dataset_field f WHERE f.dataset_id = %(dataset)s::bigint
) rows
ORDER BY part, k1, k2, k3
"""


def aliases_and_fields(
    dataset_id: int,
) -> tuple[list[tuple[Any, ...]], list[tuple[int, str, str, str]]]:
    """The dataset's aliases by (namespace, name, id): (id, namespace, name, reason,
    reason_detail, reason_event_id, the rule's slug or None, first_seen, last_seen); and its
    schema fields in order: (ordinal, name, type, description). One statement where the
    ORM's prefetches took two, each a round trip, a plan and model instances (ADR 0110);
    prepared on a kept connection (ADR 0119)."""
    aliases: list[tuple[Any, ...]] = []
    fields: list[tuple[int, str, str, str]] = []
    with read_cursor() as cursor:
        cursor.execute(_ALIASES_AND_FIELDS, {"dataset": dataset_id})
        for part, *row in cursor.fetchall():
            if part == 0:
                aliases.append(tuple(row))
            else:
                fields.append((row[0], row[1], row[2], row[3]))
    return aliases, fields

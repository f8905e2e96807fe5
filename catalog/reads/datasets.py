"""Datasets: by any alias, by page; the detail's and column lineage's reads. (A graph's
datasets' fields and newest writes: ``catalog.reads.marquez_graph``.)"""

from dataclasses import dataclass, field
from typing import Any

from catalog.models import ALIASES_SHOWN, DATASETS_BY_NAME, Dataset, DatasetField
from catalog.names import naming
from catalog.reads import run_facts
from catalog.reads.counting import Page, offset_page
from core.prepared import read_rows

# The dataset detail shows its first aliases by name, and how many it has (ADR 0180), as
# many as a list item (``Dataset.objects.with_names``).
DETAIL_ALIASES = ALIASES_SHOWN


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


# The dataset detail's rows of its own tables, in one statement keyed by the dataset alone,
# each part in its order (the sort keys k0-k3), in the columns of the aliases' part:
# 0 the first %(aliases)s aliases (name order, each with its rule's slug) and 5 how many it
# has (a symlinked table gathers aliases over years: 50,000 were 11.9 MB of detail, ADR
# 0180; /datasets/{id}/aliases pages through them all); 1 the schema fields (schema order:
# ordinal, name, type, description); 2 and 3 each direction's job links (output, input), at
# most %(limit)s each in (job, link) order, with the job's names and its job edge's run
# counts (0 without an edge): job id, namespace, name, first_seen, last_seen, declared, runs,
# done; 4 the latest runs' facts (run_facts.latest_facts_sql): run id, job namespace and
# name, direction, facet name, job id, run uuid, value. The job links' aliases are found by
# the dataset: its generic plan is the custom one (the alias table's dataset index, then the
# link table's alias index per alias, sorted); with the aliases as an array parameter, the
# job links' generic plan read a direction's whole unique index in job order (ADR 0119).
_DETAIL_ROWS = """
SELECT part, id, namespace, name, reason, reason_detail, reason_event_id, slug, first_seen,
       last_seen, declared, runs, done, value
FROM (
    SELECT 0 AS part, a.id, a.namespace, a.name, a.reason, a.reason_detail, a.reason_event_id,
           r.slug, a.first_seen, a.last_seen, NULL::boolean AS declared, NULL::bigint AS runs,
           NULL::bigint AS done, NULL::jsonb AS value,
           NULL::bigint AS k0, a.namespace AS k1, a.name AS k2, a.id AS k3
    FROM (
        SELECT * FROM catalog_dataset_alias WHERE dataset_id = %(dataset)s::bigint
        ORDER BY namespace, name, id LIMIT %(aliases)s::bigint
    ) a LEFT JOIN catalog_alias_rule r ON r.id = a.reason_rule_id
    UNION ALL
    SELECT 5, count(*), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, NULL, NULL
    FROM catalog_dataset_alias WHERE dataset_id = %(dataset)s::bigint
    UNION ALL
    SELECT 1, f.ordinal, f.name, f.type, f.description, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
           NULL, NULL, f.ordinal, NULL, NULL, NULL
    FROM catalog_dataset_field f WHERE f.dataset_id = %(dataset)s::bigint
    UNION ALL
    SELECT 2 + l.part, l.job_id, j.namespace, j.name, NULL, NULL, NULL, NULL, l.first_seen,
           l.last_seen, l.declared, COALESCE(e.run_count, 0), COALESCE(e.completed_run_count, 0),
           NULL, l.job_id, NULL, NULL, l.id
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
    UNION ALL
    SELECT 4, x.run_id, x.job_namespace, x.job_name, x.direction, x.name, x.job_id,
           x.run_uuid::text, NULL, NULL, NULL, NULL, NULL, x.value, -x.run_id, x.direction, x.name,
           NULL
    FROM ({facts}) x
) rows
ORDER BY part, k0, k1, k2, k3
""".replace(
    "{facts}",
    run_facts.latest_facts_sql(
        "(SELECT id FROM catalog_dataset_alias WHERE dataset_id = %(dataset)s::bigint)"
    ),
)


@dataclass
class DetailRows:
    """The dataset detail's rows of its own tables (``detail_rows``)."""

    # (id, namespace, name, reason, reason_detail, reason_event_id, rule slug, first_seen,
    # last_seen) by (namespace, name, id)
    aliases: list[tuple[Any, ...]] = field(default_factory=list)
    fields: list[tuple[int, str, str, str]] = field(default_factory=list)  # (ordinal, ...)
    # By direction ("output", "input"), in (job, link) order: (job id, namespace, name,
    # declared, first_seen, last_seen, the job edge's run_count and completed_run_count)
    links: dict[str, list[tuple[Any, ...]]] = field(
        default_factory=lambda: {"output": [], "input": []}
    )
    run_facts: list[dict[str, Any]] = field(default_factory=list)  # run_facts' entries
    alias_count: int = 0  # all its aliases, of which ``aliases`` are the first


def detail_rows(dataset_id: int, limit: int, aliases: int = DETAIL_ALIASES) -> DetailRows:
    """The dataset's first ``aliases`` aliases and their count, schema fields, jobs' links
    (at most ``limit`` per direction) and its latest runs' facts
    (``run_facts.dataset_entries``), in one statement of a fixed text prepared on a kept
    connection. Each was a statement of its own (ADR 0110, 0119): every one a round trip,
    which cost more than the reads once they were prepared, and the job links planned anew
    for every request (ADR 0124)."""
    return detail_rows_of(read_rows(*detail_rows_read(dataset_id, limit, aliases)))


def detail_rows_read(
    dataset_id: int, limit: int, aliases: int = DETAIL_ALIASES
) -> tuple[str, dict[str, Any]]:
    """``detail_rows``' statement and its values: for a caller that sends it with another
    read in one round trip (the detail, ``core.pipelined_reads``, ADR 0140)."""
    return _DETAIL_ROWS, {"dataset": dataset_id, "limit": limit, "aliases": aliases}


def detail_rows_of(read: list[Any]) -> DetailRows:
    """``detail_rows`` from its statement's rows."""
    rows = DetailRows()
    facts: list[tuple[Any, ...]] = []
    for part, *row in read:
        if part == 0:
            rows.aliases.append(tuple(row[:9]))
        elif part == 5:
            rows.alias_count = row[0]
        elif part == 1:
            rows.fields.append((row[0], row[1], row[2], row[3]))
        elif part == 4:  # as latest_facts_sql's columns
            facts.append((row[0], row[6], row[5], row[1], row[2], row[3], row[4], row[12]))
        else:
            job, namespace, name, first, last, declared, runs, done = (
                row[0],
                row[1],
                row[2],
                row[7],
                row[8],
                row[9],
                row[10],
                row[11],
            )
            rows.links["output" if part == 2 else "input"].append(
                (job, namespace, name, declared, first, last, runs, done)
            )
    rows.run_facts = run_facts.dataset_entries(facts)
    return rows

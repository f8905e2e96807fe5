"""Run facts: output/input statistics and data quality metrics and assertions a run
reported about a dataset, kept per (run, alias, direction, facet) by version (ADR 0061).

They come from an input's ``inputFacets`` or an output's ``outputFacets`` (where the spec
puts them), or from the dataset facets of that input or output (where some producers put
``dataQualityMetrics``/``dataQualityAssertions``); the run's own input/output facet wins
over a dataset facet of the same name in the same event. The upsert keeps the value of the
greatest version, so order and redelivery do not matter. Rows of the batch's own runs only
(the free part, under the runs' runId locks).
"""

from typing import Any

import orjson
from django.db import connection

from catalog.facets import RUN_FACT_FACETS
from catalog.services.derivation.edge_runs import columns_of
from catalog.services.derivation.records import AliasKey, Facts, RawEvent, RunKey, version_text

FactKey = tuple[RunKey, AliasKey, str, str]  # (run, alias, direction, facet name)


def read_io_facets(
    facts: "Facts", event: RawEvent, run: RunKey, alias: AliasKey, direction: str, dataset: dict
) -> None:
    """Note the run facts an input or output of a run event carries."""
    found: dict[str, Any] = {}
    for container in ("facets", f"{direction}Facets"):  # the io facet last: it wins
        facets = dataset.get(container)
        if not isinstance(facets, dict):
            continue
        for name in RUN_FACT_FACETS:
            value = facets.get(name)
            if isinstance(value, dict):
                found[name] = value
    if not found:
        return
    version = version_text(event)
    for name, value in found.items():
        key = (run, alias, direction, name)
        current = facts.run_dataset_facets.get(key)
        if current is None or version > current[0]:
            facts.run_dataset_facets[key] = (version, value)


_UPSERT = """
INSERT INTO catalog_run_dataset_facet (run_id, alias_id, direction, name, version, value)
SELECT r, a, d, n, v, j::jsonb FROM unnest(
    %s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[]
) AS u(r, a, d, n, v, j)
ON CONFLICT (run_id, alias_id, direction, name) DO UPDATE SET
    version = EXCLUDED.version, value = EXCLUDED.value
WHERE catalog_run_dataset_facet.version < EXCLUDED.version
"""


def store_run_dataset_facets(
    facts: "Facts", run_ids: dict[RunKey, int], alias_ids: dict[AliasKey, int], keys: list[RunKey]
) -> None:
    """Upsert the run facts of the runs ``keys`` (their runId locks are held)."""
    wanted = set(keys)
    rows = sorted(
        (
            run_ids[run],
            alias_ids[alias],
            direction,
            name,
            version,
            orjson.dumps(value).decode(),
        )
        for (run, alias, direction, name), (version, value) in facts.run_dataset_facets.items()
        if run in wanted
    )
    if rows:
        with connection.cursor() as cursor:
            cursor.execute(_UPSERT, columns_of(rows, 6))

"""The facets the catalog interprets: one module per facet, all in one table (``FACETS``).

Each module declares its facet (``FACET``: where it appears, how derivation extracts it,
what it projects onto the catalog, how /api/v1 and the Marquez mount show it) and holds
the functions that read it; derivation (catalog/services/derivation/) and both read
surfaces call those functions and never spell a facet's name
(tests/catalog/facets/test_registry.py checks the code for names outside this package).
Every facet, interpreted or not, is also kept as sent in its holder's ``facets`` (by
version, ADR 0021) and served redacted there. docs/derivation.md lists this table.

Adding a facet: a module here with ``NAME`` and ``FACET``, a line in ``FACETS``, and its
case in tests/catalog/facets/test_facets_end_to_end.py. Every facet of the spec has a row
(ADR 0084): those the catalog does not read are in ``kept.KEPT``, each with its reason, and
tests/catalog/facets/test_spec_coverage.py fails on a spec schema file no row covers.

Pure Python, no models: ``catalog.models.jobs_runs`` imports ``RUN_FACT_FACETS``.
"""

from catalog.facets import (
    catalog_identity,
    column_lineage,
    data_quality_assertions,
    data_quality_metrics,
    data_source,
    dataset_type,
    documentation,
    error_message,
    execution_parameters,
    hierarchy,
    input_statistics,
    job_dependencies,
    job_type,
    kept,
    lifecycle_state_change,
    lineage,
    lineage_catalog_edge,
    nominal_time,
    output_statistics,
    ownership,
    parent,
    processing_engine,
    run_tests,
    schema,
    source_code,
    source_code_location,
    sql,
    storage,
    subset,
    symlinks,
    tags,
)
from catalog.facets.base import Facet, RunFactShape

# The one table, in the order docs/derivation.md lists it.
FACETS: tuple[Facet, ...] = (
    # job
    job_type.FACET,
    documentation.FACET,
    ownership.FACET,
    tags.FACET,
    sql.FACET,
    source_code.FACET,
    source_code_location.FACET,
    # run
    parent.FACET,
    nominal_time.FACET,
    error_message.FACET,
    processing_engine.FACET,
    lineage_catalog_edge.FACET,
    run_tests.FACET,
    execution_parameters.FACET,
    job_dependencies.FACET,
    # job and dataset, experimental (behind a setting)
    lineage.FACET,
    # dataset
    schema.FACET,
    symlinks.FACET,
    catalog_identity.FACET,
    lifecycle_state_change.FACET,
    data_source.FACET,
    storage.FACET,
    column_lineage.FACET,
    hierarchy.FACET,
    dataset_type.FACET,
    # run facts (input/output)
    output_statistics.FACET,
    input_statistics.FACET,
    data_quality_metrics.FACET,
    data_quality_assertions.FACET,
    subset.FACET,
    # the spec's facets kept as sent, unread
    *kept.KEPT,
)
# The spec the table was last checked against: its version and the commit of
# OpenLineage/OpenLineage whose spec/facets/ tests/fixtures/openlineage/spec/facets copies.
SPEC_CHECKED = "OpenLineage spec 2-0-2, spec/facets at commit 8f02abfb7a25 (2026-08-20)"
BY_NAME: dict[str, Facet] = {facet.name: facet for facet in FACETS}
assert len(BY_NAME) == len(FACETS), "a facet is registered twice"

# Kept per (run, alias, direction) as RunDatasetFacet rows (ADR 0061).
RUN_FACTS: dict[str, RunFactShape] = {
    facet.name: facet.run_fact for facet in FACETS if facet.run_fact is not None
}
RUN_FACT_FACETS: tuple[str, ...] = tuple(RUN_FACTS)
# Dataset facets derivation does not merge into the dataset's facets (kept as rows).
NOT_MERGED: tuple[str, ...] = tuple(facet.name for facet in FACETS if not facet.kept_in_facets)


def table_markdown() -> str:
    """The table as docs/derivation.md shows it (checked against it by a test)."""
    lines = [
        f"Checked against {SPEC_CHECKED}.",
        "",
        "| facet | appears on | extracted | projects onto | /api/v1 | Marquez mount |",
        "|---|---|---|---|---|---|",
    ]
    for facet in FACETS:
        cells = [
            f"`{facet.name}`",
            ", ".join(facet.appears),
            facet.extracts,
            facet.projects,
            facet.native,
            facet.marquez,
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


__all__ = [
    "BY_NAME",
    "FACETS",
    "NOT_MERGED",
    "RUN_FACTS",
    "RUN_FACT_FACETS",
    "SPEC_CHECKED",
    "table_markdown",
]

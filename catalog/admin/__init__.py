"""The steward admin: inspect and navigate the catalog, curate dataset identity.

Derived rows (jobs, runs, datasets, aliases, edges, facts) are read-only: stewards change
the catalog through steward input (alias rules, merges) and re-derivation, see
catalog/services/curation.py and docs/admin.md. Every page is bounded (ADR 0040): no full counts,
ordering on indexed columns only, related rows as small tables with a link to the rest.

One module per area; importing them registers their admins. The event admin (events.py)
replaces ingest's plain one with links into the catalog (ADR 0044).
"""

from django.contrib import admin

from catalog.admin import (
    alias_rules,
    changes,
    datasets,
    events,
    jobs,
    labels,
    lineage,
    retirement,
    webhooks,
)

admin.site.index_template = "admin/lineage_index.html"
admin.site.site_header = "Lineage Catalog"
admin.site.site_title = "Lineage Catalog admin"
admin.site.index_title = "Steward's overview"

__all__ = [
    "alias_rules",
    "changes",
    "datasets",
    "events",
    "jobs",
    "labels",
    "lineage",
    "retirement",
    "webhooks",
]

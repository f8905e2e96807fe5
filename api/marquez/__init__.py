"""A Marquez-compatible read API over the catalog (docs/marquez.md, docs/adr/0033).

An adapter layer: Marquez's paths and field names in front of the catalog's own queries
(graph walk, search, querysets), so Marquez's web UI and ``marquez-python`` work unchanged.
"""

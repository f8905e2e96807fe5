"""The shared toolbox below every app: problem documents, JSON rendering, lookups,
timestamps, redaction and the admin base.

core has no models and imports none of the project's apps (tests/test_import_rules.py);
ingest, catalog and api import it (docs/architecture.md, ADR 0066).
"""

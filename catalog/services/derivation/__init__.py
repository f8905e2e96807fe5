"""Derivation of the catalog from the raw event log (see docs/derivation.md).

``facts`` reads events into facts (pure Python); ``jobs_runs``, ``datasets`` and ``edges``
write them; ``batch`` claims events and runs one transaction per batch.
"""

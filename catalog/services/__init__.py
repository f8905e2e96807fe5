"""Catalog write services: each owns its transactions; tasks, commands and the admin call them.

``derive`` (derivation's entry points, over ``derivation/``), ``curation`` (a steward's
rules, merges and splits), ``rederive_jobs`` (background re-derives), ``display_names``,
``rule_files`` and ``audit``.
"""

"""How names are spelled: normalisation, keys, run ids, alias-rule patterns and rules.

Pure functions and values: nothing here reads the database or imports another part of the
catalog, so derivation, lookups and tests agree on one spelling.
"""

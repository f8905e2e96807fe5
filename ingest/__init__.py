"""The write side: the raw event log, tokens, request parsing and validation, ingest views."""

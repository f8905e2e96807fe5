"""The catalog derived from the raw event log: jobs, runs, datasets, aliases, lineage edges."""

"""The steward's lineage picture: build, lay out and draw a graph the lineage walk read.

No database: every function takes what ``catalog.lineage`` returned.
"""

"""The lineage graph: one bounded walk over the edge tables, and what it draws.

The request and its window, the walk, the diff, the job links, declared (static) lineage,
parent/child jobs, column lineage and whether an edge is current. Reads only.
"""

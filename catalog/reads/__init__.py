"""Read services over the catalog for a read surface that is not the native API's own.

The Marquez mount (api/marquez/) holds routing and shapes only: every row it shows comes
from a function here, by concept (namespaces, jobs, runs, datasets, dataset versions, raw
events and their activity, the drawn lineage graph). Each answers with a fixed handful of
queries whatever the page size, and every list is bounded (a page, a cap).
"""

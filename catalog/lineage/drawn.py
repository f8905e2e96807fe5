"""The lineage graph with each drawn job's every link: what Marquez's ``/lineage`` draws.

Marquez draws each job with every dataset it reads and writes, also those past the depth
bound, and shows each node whole (a Job or a Dataset as its API gives them). This is
``catalog.lineage.graph.lineage_graph`` (both directions, from the root by id: the walk's
root check reads the store's two facts, ADR 0104) with the jobs' own links (capped) beside
the walk's, and the ids of every node to draw: the walk's datasets and jobs and the datasets
the jobs touch past its bounds. The nodes' whole rows are the caller's to read, once each
(``catalog.reads.marquez_graph.node_rows``, ADR 0118): the walk reads only the columns its
own nodes show, in one statement, as it does for the catalog's graph. A temporary dataset
the walk folded (ADR 0089) is left out with its links: the graph's ``through`` edges link
the jobs on either side of it directly.
"""

from dataclasses import dataclass

from catalog.lineage import job_edges
from catalog.lineage.graph import lineage_graph
from catalog.lineage.request import DEFAULT_MAX_NODES, EDGES_PER_NODE, Graph, GraphRequest, NodeRef


@dataclass(frozen=True)
class DrawnGraph:
    graph: Graph
    dataset_ids: list[int]  # the walk's and the drawn jobs' datasets, by id
    job_ids: list[int]  # the drawn jobs, by id
    links: list[job_edges.JobLink]  # every (job, dataset, direction) of the drawn jobs


def drawn_graph(root: NodeRef, depth: int, max_nodes: int = DEFAULT_MAX_NODES) -> DrawnGraph:
    """The graph around ``root``; UnknownNode when it is not there (or is retired)."""
    request = GraphRequest(root=root, direction="both", depth=depth, max_nodes=max_nodes)
    # Marquez draws which edges there are, not their figures (ADR 0125).
    graph = lineage_graph(request, figures=False)
    jobs = sorted(node["job_id"] for node in graph.nodes if node["type"] == "job")
    walked = {node["dataset_id"] for node in graph.nodes if node["type"] == "dataset"}
    links = [
        link
        for link in job_edges.links_of_jobs(jobs, EDGES_PER_NODE * max_nodes)
        if link[1] not in graph.folded
    ]
    return DrawnGraph(graph, sorted(walked | {link[1] for link in links}), jobs, links)

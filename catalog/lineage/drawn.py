"""The lineage graph with each node's whole row and each drawn job's every link.

Marquez draws each job with every dataset it reads and writes, also those past the depth
bound, and shows each node whole (a Job or a Dataset as its API gives them). This is
``catalog.lineage.graph.lineage_graph`` (both directions) with its nodes read as whole rows, the
root the caller found not read again, and the jobs' own links (capped) beside the walk's:
each row is read once. A temporary dataset the walk folded (ADR 0089) is left out with its
links: the graph's ``through`` edges link the jobs on either side of it directly.
"""

from dataclasses import dataclass

from catalog.lineage import job_edges
from catalog.lineage.graph import lineage_graph
from catalog.lineage.request import DEFAULT_MAX_NODES, EDGES_PER_NODE, Graph, GraphRequest, NodeRef
from catalog.models import Dataset, Job


@dataclass(frozen=True)
class DrawnGraph:
    graph: Graph
    datasets: list[Dataset]  # the walk's and the drawn jobs' datasets, by id
    jobs: list[Job]  # the drawn jobs (parent selected), by id
    links: list[job_edges.JobLink]  # every (job, dataset, direction) of the drawn jobs


def drawn_graph(
    root: Dataset | Job,
    depth: int,
    max_nodes: int = DEFAULT_MAX_NODES,
    declarations: bool = True,
    retirements: bool = True,
) -> DrawnGraph:
    """The graph around ``root`` (a row the caller read; a job with its parent selected).

    ``declarations``, ``retirements``: whether the store holds any declaration and any
    retirement, as the caller read them with the root (``GraphRequest``'s two facts). The
    walk cannot know them for a root it is handed and assumes both; False leaves out the
    static reads and the retirement probes that would find nothing (ADR 0116)."""
    ref = NodeRef("job" if isinstance(root, Job) else "dataset", root.pk)
    request = GraphRequest(
        root=ref,
        direction="both",
        depth=depth,
        max_nodes=max_nodes,
        declarations=declarations,
        retirements=retirements,
    )
    graph = lineage_graph(request, root_row=root, rows=True)
    jobs = [row for row in graph.rows.values() if isinstance(row, Job)]
    walked = {row.pk: row for row in graph.rows.values() if isinstance(row, Dataset)}
    links = [
        link
        for link in job_edges.links_of_jobs([job.pk for job in jobs], EDGES_PER_NODE * max_nodes)
        if link[1] not in graph.folded
    ]
    past = sorted({link[1] for link in links} - set(walked))
    if past:  # datasets the jobs touch past the walk's bounds: read once, here
        walked.update((row.pk, row) for row in Dataset.objects.filter(id__any=past))
    return DrawnGraph(
        graph,
        [walked[key] for key in sorted(walked)],
        sorted(jobs, key=lambda job: job.pk),
        links,
    )

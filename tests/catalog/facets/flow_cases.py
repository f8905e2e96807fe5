"""The cases of the facets issue 41 items 2 and 4 read (ADRs 0089, 0090), for
test_facets_end_to_end.py: a run's job dependencies (control edges, shown only with
``edges=data,control``) and a temporary job output folded into a job-to-job link, each
derived and read back through /api/v1 and the Marquez mount."""

from collections.abc import Callable

from catalog.facets import dataset_type, job_dependencies
from tests.api.project_fixtures import derive
from tests.catalog.facets.world import JOB, PARENT_RUN, Reads, event, facet, ok

# (derive, native check, Marquez check) per facet name.
Checks = tuple[Callable[[], None], Callable[[Reads], None], Callable[[Reads], None]]


DEPENDENCIES = facet(
    "1-0-1/JobDependenciesRunFacet",
    upstream=[
        {
            "job": {"namespace": JOB[0], "name": "orders.extract"},
            "run": {"runId": PARENT_RUN},
            "dependency_type": "DIRECT_INVOCATION",
            "sequence_trigger_rule": "FINISH_TO_START",
            "status_trigger_rule": "EXECUTE_ON_SUCCESS",
        }
    ],
    trigger_rule="ALL_SUCCESS",
)


class JobDependenciesCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.run()["facets"][job_dependencies.NAME]["trigger_rule"] == "ALL_SUCCESS"
        job = r.job()["id"]
        graph = ok(r.api.get(f"/api/v1/lineage/graph?node=job:{job}&edges=data,control"))
        [edge] = [edge for edge in graph["edges"] if edge["kind"] == "control"]
        assert edge["target"] == f"job:{job}"
        assert edge["control"]["sequence_trigger_rule"] == "FINISH_TO_START"

    @staticmethod
    def marquez(r: Reads) -> None:
        assert r.mz_run()["facets"][job_dependencies.NAME]["trigger_rule"] == "ALL_SUCCESS"
        body = ok(r.mz.get("/lineage", nodeId=f"job:{JOB[0]}:{JOB[1]}", depth=2))
        assert f"job:{JOB[0]}:orders.extract" not in {node["id"] for node in body["graph"]}


TEMPORARY = facet("1-0-1/DatasetTypeDatasetFacet", datasetType="JOB_OUTPUT", subType="TEMPORARY")
NEXT_JOB = "orders.next"


def _temporary_then_read() -> None:
    """The job writes OUTPUT as a temporary job output; a second job reads it."""
    reader = event(output_facets={dataset_type.NAME: TEMPORARY})
    reader["job"] = {**reader["job"], "name": NEXT_JOB}
    reader["run"] = {**reader["run"], "runId": "0195f1c4-6a0e-7c8e-9d4f-3b2a1c0d7702"}
    reader["inputs"], reader["outputs"] = reader["outputs"], []
    derive(event(output_facets={dataset_type.NAME: TEMPORARY}), reader)


class DatasetTypeCase:
    @staticmethod
    def native(r: Reads) -> None:
        assert r.dataset()["facets"][dataset_type.NAME]["subType"] == "TEMPORARY"
        job = r.job()["id"]
        graph = ok(r.api.get(f"/api/v1/lineage/graph?node=job:{job}&direction=downstream"))
        [link] = [edge for edge in graph["edges"] if edge["kind"] == "through"]
        assert link["through"] == [f"dataset:{r.dataset()['id']}"]
        assert link["target"] != f"job:{job}" and len(graph["nodes"]) == 2  # the 2 jobs

    @staticmethod
    def marquez(r: Reads) -> None:
        body = ok(r.mz.get("/lineage", nodeId=f"job:{JOB[0]}:{JOB[1]}", depth=2))
        [node] = [node for node in body["graph"] if node["id"] == f"job:{JOB[0]}:{JOB[1]}"]
        assert [edge["destination"] for edge in node["outEdges"]] == [f"job:{JOB[0]}:{NEXT_JOB}"]


CASES: dict[str, Checks] = {
    job_dependencies.NAME: (
        lambda: derive(event(run={job_dependencies.NAME: DEPENDENCIES})),
        JobDependenciesCase.native,
        JobDependenciesCase.marquez,
    ),
    dataset_type.NAME: (_temporary_then_read, DatasetTypeCase.native, DatasetTypeCase.marquez),
}

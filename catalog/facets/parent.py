"""``parent`` (run): the job, and optionally the run, that started this run."""

from typing import Any

from catalog.facets.base import RUN, Facet, present

NAME = "parent"
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("ParentRunFacet",),
    extracts="the parent job (a placeholder when unseen) and run (a placeholder run) of "
    "the event's run; the newest event's parent wins; also merged into the run's facets",
    projects="Job.parent, Run.parent_run",
    native="job `parent`/`children`, run `parent_run`, and in the run's `facets`",
    marquez="job `parentJobName`",
)


def reference(facets: Any) -> tuple[str, str, str | None] | None:
    """(job namespace, job name, run id or None) the facet names, or None when it names
    no usable job (the facet is then ignored, as any bad shape)."""
    facet = present(facets, NAME)
    if facet is None:
        return None
    job, run = facet.get("job") or {}, facet.get("run") or {}
    if not isinstance(job, dict) or not isinstance(run, dict):
        return None
    namespace, name = job.get("namespace"), job.get("name")
    if not isinstance(namespace, str) or not isinstance(name, str) or not name:
        return None
    run_id = run.get("runId")
    return namespace, name, run_id if isinstance(run_id, str) and run_id else None

"""``jobType`` (job): processing type (BATCH/STREAMING), job type and integration."""

from typing import Any

from catalog.facets.base import JOB, Facet, opened

NAME = "jobType"
FACET = Facet(
    NAME,
    appears=(JOB,),
    schemas=("JobTypeJobFacet",),
    extracts="merged into the job's facets by version; a run is streaming when one of "
    "its own events' job facets says processingType STREAMING; emissionPattern's events "
    "(PERIODIC, ACCUMULATIVE) of one runId are one run, the union of what each names",
    projects="Job.processing_type, Job.job_type, Job.integration (redacted); "
    "Run.is_streaming (a streaming run that is not terminal is RUNNING; its RUNNING events "
    "are writes, and its edges are current while it runs; ADR 0091)",
    native="job `processing_type`, `job_type`, `integration`, and in `facets`",
    marquez="job `type`: STREAM for a STREAMING processing type, else BATCH",
)


def projection(facets: Any) -> tuple[Any, Any, Any]:
    """(processingType, jobType, integration) as sent, "" for each one missing."""
    facet = opened(facets, NAME)
    return (
        facet.get("processingType") or "",
        facet.get("jobType") or "",
        facet.get("integration") or "",
    )


def is_streaming(facets: Any) -> bool:
    """Whether one event's own job facets declare a streaming job."""
    return opened(facets, NAME).get("processingType") == "STREAMING"

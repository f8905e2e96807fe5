"""``jobType`` (job): processing type (BATCH/STREAMING), job type and integration."""

from typing import Any

from catalog.facets.base import JOB, Facet, opened

NAME = "jobType"
FACET = Facet(
    NAME,
    appears=(JOB,),
    schemas=("JobTypeJobFacet",),
    extracts="merged into the job's facets by version; a run is streaming when one of "
    "its own events' job facets says processingType STREAMING; emissionPattern: the events "
    "of one runId are one run, the union of what each names (ACCUMULATIVE, the default), "
    "or (eventContentMode COMPLETE_SNAPSHOT in one of its own events) each event is "
    "complete for its window",
    projects="Job.processing_type, Job.job_type, Job.integration (redacted); "
    "Run.is_streaming (a streaming run that is not terminal is RUNNING; its RUNNING events "
    "are writes, and its edges are current while it runs; ADR 0091); "
    "Run.emits_snapshots (its lineage, job edges and column lineage are its newest "
    "window's: a dataset or field mapping a later snapshot no longer names leaves them; "
    "ADR 0091)",
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


SNAPSHOT = "COMPLETE_SNAPSHOT"


def emits_snapshots(facets: Any) -> bool:
    """Whether one event's own job facets say each event is complete for its time window
    (``emissionPattern.eventContentMode`` COMPLETE_SNAPSHOT; ACCUMULATIVE, the spec's
    default, and a bad shape: no)."""
    pattern = opened(facets, NAME).get("emissionPattern")
    return isinstance(pattern, dict) and pattern.get("eventContentMode") == SNAPSHOT

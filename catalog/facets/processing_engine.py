"""``processing_engine`` (run): the engine (name, version) that ran the run.
Kept as sent, read by no projection."""

from catalog.facets.base import RUN, Facet

NAME = "processing_engine"
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("ProcessingEngineRunFacet",),
    extracts="merged into the run's facets by version",
    projects="facets only",
    native="in the run's `facets`",
    marquez="in the run's `facets`",
)

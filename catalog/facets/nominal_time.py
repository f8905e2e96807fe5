"""``nominalTime`` (run): the scheduled start and end of a run."""

from typing import Any

from catalog.facets.base import RUN, Facet, opened

NAME = "nominalTime"
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("NominalTimeRunFacet",),
    extracts="merged into the run's facets by version",
    projects="Run.nominal_start_time, Run.nominal_end_time",
    native="run `nominal_start_time`, `nominal_end_time`, and in `facets`",
    marquez="run `nominalStartTime`, `nominalEndTime`",
)


def times(facets: Any) -> tuple[Any, Any]:
    """(nominalStartTime, nominalEndTime) as sent (None when missing)."""
    facet = opened(facets, NAME)
    return facet.get("nominalStartTime"), facet.get("nominalEndTime")

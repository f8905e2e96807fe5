"""``errorMessage`` (run): why a run failed."""

from typing import Any

from catalog.facets.base import RUN, Facet, opened

NAME = "errorMessage"
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("ErrorMessageRunFacet",),
    extracts="merged into the run's facets by version",
    projects="Run.error_message (redacted, ADR 0056)",
    native="run `error_message`, and in `facets`",
    marquez="in the run's `facets`",
)


def message(facets: Any) -> Any:
    return opened(facets, NAME).get("message") or ""

"""The spec's facets the catalog does not read: kept as sent, each with the reason.

Every facet of the current spec has a row in the table (issue 41 item 8, ADR 0084). The
ones here have no projection yet: a job, run or dataset facet is merged into its holder's
``facets`` by version and served there, redacted; an input or output facet stays in the
stored event. Reading one means giving it a module of its own and moving its row there.
"""

from catalog.facets.base import DATASET, INPUT, OUTPUT, RUN, Facet

IN_THE_EVENT = "in the stored event only (input and output facets are not merged)"


def _kept(name: str, appears: tuple[str, ...], schemas: str | tuple[str, ...], why: str) -> Facet:
    if set(appears) <= {INPUT, OUTPUT}:
        extracts, native, marquez = IN_THE_EVENT, "the raw event", "the raw event"
    else:
        holders = " or ".join(f"{holder}'s" for holder in appears)
        extracts = f"merged into the {holders} facets by version"
        native = marquez = f"in the {holders} `facets`"
    return Facet(
        name,
        appears=appears,
        schemas=(schemas,) if isinstance(schemas, str) else schemas,
        extracts=extracts,
        projects=f"kept as sent: {why}",
        native=native,
        marquez=marquez,
    )


KEPT: tuple[Facet, ...] = (
    _kept(
        "environmentVariables",
        (RUN,),
        "EnvironmentVariablesRunFacet",
        "no projection needs a run's environment; served redacted",
    ),
    _kept(
        "externalQuery",
        (RUN,),
        "ExternalQueryRunFacet",
        "an id in the external system, nothing the catalog links to",
    ),
    _kept(
        "extractionError",
        (RUN,),
        "ExtractionErrorRunFacet",
        "the producer's own parsing errors; the event's lineage is taken as sent",
    ),
    _kept(
        "version",
        (DATASET,),
        "DatasetVersionDatasetFacet",
        "dataset versions are the runs that wrote them (ADR 0064), not the producer's id",
    ),
)

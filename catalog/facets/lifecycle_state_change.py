"""``lifecycleStateChange`` (dataset): CREATE, ALTER, DROP, RENAME, ... and, for a rename,
the previous name."""

from typing import Any

from catalog.facets.base import DATASET, Facet, present

NAME = "lifecycleStateChange"
DROP = "DROP"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("LifecycleStateChangeDatasetFacet",),
    extracts="merged into the dataset's facets by version; a RENAME's previousIdentifier "
    "(string namespace, non-blank name) becomes an alias linked to the dataset (reason rename)",
    projects="Dataset.lifecycle_state (redacted), lifecycle_changed_at (the facet's version "
    "time), is_dropped (state DROP); AliasLink for a rename",
    native="dataset `lifecycle_state`, `lifecycle_changed_at`, `is_dropped`, and in `facets`",
    marquez="dataset `lifecycleState`, `lastLifecycleState`, `deleted`; a dataset "
    "version's `lifecycleState` from that run's own facet",
)


def state(facets: Any) -> Any:
    """The state as sent ("" when it has none), or None without the facet."""
    facet = present(facets, NAME)
    return None if facet is None else facet.get(NAME) or ""


def version_state(facets: Any) -> str | None:
    """The state of one event's facet, for a dataset version: a string, else None."""
    value = (present(facets, NAME) or {}).get(NAME)
    return value if isinstance(value, str) else None


def renamed_from(facets: Any) -> tuple[str, str] | None:
    """The previous (namespace, name) of a RENAME, or None."""
    facet = present(facets, NAME)
    if facet is None or facet.get(NAME) != "RENAME":
        return None
    previous = facet.get("previousIdentifier")
    if not isinstance(previous, dict):
        return None
    namespace, name = previous.get("namespace"), previous.get("name")
    if isinstance(namespace, str) and isinstance(name, str) and name.strip():
        return namespace, name
    return None

"""``jobDependencies`` (run): control flow between jobs, never data flow (ADR 0090).

A run says which jobs' runs must finish before it starts (``upstream``) and which start
after it (``downstream``), with the spec's trigger rules. Each names a job; each becomes a
control edge between two jobs (``catalog_control_edge``), drawn by the graph only when
asked (``edges=control``) and never counted as data lineage.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from catalog.facets.base import RUN, Facet, opened
from catalog.names.naming import producer_text

NAME = "jobDependencies"
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("JobDependenciesRunFacet",),
    extracts="merged into the run's facets by version; each upstream and downstream job "
    "named becomes a control edge (the newest event's rules win)",
    projects="ControlEdge (upstream job → downstream job, dependency type, sequence and "
    "status trigger rules, the downstream run's trigger rule; ADR 0090)",
    native="in the run's `facets`; the graph's `control` edges with `edges=data,control`",
    marquez="in the run's `facets` (Marquez has no control edges)",
)
RULE_CHARS = 64  # the rules are short enum words; a longer one is cut, not refused


@dataclass(frozen=True)
class Dependency:
    """One job the run depends on (upstream) or that depends on it (downstream)."""

    upstream: bool
    namespace: str
    name: str
    dependency_type: str
    sequence_trigger_rule: str
    status_trigger_rule: str


def dependencies(facets: Any) -> Iterator[Dependency]:
    """The facet's dependencies of a usable shape: an entry without a job of string
    namespace and name is skipped (the event is kept as sent, with a warning)."""
    facet = opened(facets, NAME)
    for side in ("upstream", "downstream"):
        entries = facet.get(side)
        for entry in entries if isinstance(entries, list) else []:
            job = entry.get("job") if isinstance(entry, dict) else None
            if not isinstance(job, dict):
                continue
            namespace, name = job.get("namespace"), job.get("name")
            if not isinstance(namespace, str) or not isinstance(name, str) or not name:
                continue
            yield Dependency(
                side == "upstream",
                namespace,
                name,
                _rule(entry.get("dependency_type")),
                _rule(entry.get("sequence_trigger_rule")),
                _rule(entry.get("status_trigger_rule")),
            )


def trigger_rule(facets: Any) -> str:
    """The run's own trigger rule over its upstream jobs ("" when not a string)."""
    return _rule(opened(facets, NAME).get("trigger_rule"))


def _rule(value: Any) -> str:
    """A rule as stored: producer text, so redacted once when derived (ADR 0056)."""
    return producer_text(value, RULE_CHARS) if isinstance(value, str) else ""

"""``executionParameters`` (run): the parameters the job was run with, shown on the run.

Values are producer text and often secrets (``db.password``, a JDBC URL with its user's
password): ``core.redaction.redact`` hides the value of a parameter whose key or name
looks secret (the ``{"key": …, "value": …}`` pair shape) and the password of a URL, on
every read path, like every facet."""

from typing import Any

from catalog.facets._numbers import text
from catalog.facets.base import RUN, Facet, opened

NAME = "executionParameters"
LIMIT = 200  # parameters shown per run
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("ExecutionParametersRunFacet",),
    extracts="merged into the run's facets by version",
    projects="read from the run's facets when shown (no rows of its own)",
    native="run detail `parameters` (redacted), and in the run's `facets`",
    marquez="in the run's `facets` (redacted)",
)


def parameters(facets: Any) -> list[dict[str, Any]]:
    """Each parameter with a key, in the spec's shape (key, name, value, description), as
    sent: the caller redacts the list (a secret key's value goes)."""
    items = opened(facets, NAME).get("parameters")
    answer = []
    for item in items[:LIMIT] if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            continue
        answer.append(
            {
                "key": item["key"],
                "name": text(item.get("name")),
                "value": text(item.get("value")),
                "description": text(item.get("description")),
            }
        )
    return answer

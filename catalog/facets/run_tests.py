"""``test`` (run): the tests the run executed and their results (TestRunFacet), shown on
the run and, the latest run's that reported any, on its job."""

from typing import Any

from catalog.facets._numbers import text
from catalog.facets.base import RUN, Facet, opened

NAME = "test"
LIMIT = 200  # tests shown per run (every list bounded)
FACET = Facet(
    NAME,
    appears=(RUN,),
    schemas=("TestRunFacet",),
    extracts="merged into the run's facets by version",
    projects="read from the run's facets when shown (no rows of its own)",
    native="run detail `tests`; job detail `latest_tests` (the newest of the job's latest "
    "runs that reported tests), and in the run's `facets`",
    marquez="in the run's `facets`",
)


def results(facets: Any) -> list[dict[str, Any]]:
    """Each test as the API shows it: name and status (the spec's required fields; a test
    without a name is skipped), then what else was sent, as text. Producer text: the reader
    redacts it."""
    items = opened(facets, NAME).get("tests")
    answer = []
    for item in items[:LIMIT] if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        answer.append(
            {
                "name": item["name"],
                "status": text(item.get("status")),
                "severity": text(item.get("severity")),
                "type": text(item.get("type")),
                "description": text(item.get("description")),
                "expected": text(item.get("expected")),
                "actual": text(item.get("actual")),
            }
        )
    return answer


def reported(facets: Any) -> bool:
    """Whether the run's facets hold a test facet at all (the job's latest results)."""
    return bool(opened(facets, NAME))

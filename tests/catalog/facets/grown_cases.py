"""The cases of the facets issue 41 items 6 and 3 read (ADRs 0092, 0093), for
test_facets_end_to_end.py: the run's tests, its execution parameters, an input's subset and
a dataset's hierarchy, each from the spec's own example
(spec-examples/facets/BaseSubsetDatasetFacet/4.json, HierarchyDatasetFacet/1.json;
TestRunFacet's and ExecutionParametersRunFacet's schema ``example`` values, the spec
having no example file for them), derived and read back through /api/v1 and the Marquez mount."""

import json
from collections.abc import Callable

from catalog.facets import execution_parameters, hierarchy, run_tests, subset
from tests.api.project_fixtures import derive
from tests.catalog.facets.spec_examples import EXAMPLES
from tests.catalog.facets.world import INPUT, Reads, event, facet

# (derive, native check, Marquez check) per facet name.
Checks = tuple[Callable[[], None], Callable[[Reads], None], Callable[[Reads], None]]

# TestRunFacet 1-0-1's schema examples, one failing test that only warns.
TESTS = facet(
    "1-0-1/TestRunFacet",
    tests=[
        {
            "name": "assert_no_orphans",
            "status": "fail",
            "severity": "warn",
            "type": "not_null",
            "description": "Ensures all order IDs are unique across the table.",
            "expected": "1000",
            "actual": "999",
            "content": "SELECT COUNT(*) FROM orders WHERE amount < 0",
            "contentType": "sql",
        },
        {"name": "unique_order_id", "status": "pass"},
    ],
)
PARAMETERS = facet(
    "1-0-0/ExecutionParametersRunFacet",
    parameters=[
        {
            "key": "task.timeout",
            "name": "Task timeout",
            "description": "How long (in seconds) can individual task run without timing out.",
            "value": "3600",
        }
    ],
)
HIERARCHY = json.loads((EXAMPLES / "HierarchyDatasetFacet" / "1.json").read_text())
SUBSET = json.loads((EXAMPLES / "BaseSubsetDatasetFacet" / "4.json").read_text())["subset"]


def _tests_native(r: Reads) -> None:
    tests = r.run()["tests"]
    assert [(t["name"], t["status"], t["severity"]) for t in tests] == [
        ("assert_no_orphans", "fail", "warn"),
        ("unique_order_id", "pass", None),
    ]
    first = tests[0]
    assert (first["expected"], first["actual"], first["type"]) == ("1000", "999", "not_null")
    latest = r.job()["latest_tests"]
    assert latest["tests"] == tests and latest["state"] == "COMPLETE"


def _tests_marquez(r: Reads) -> None:
    assert r.mz_run()["facets"][run_tests.NAME]["tests"][1] == TESTS["tests"][1]


def _parameters_native(r: Reads) -> None:
    assert r.run()["parameters"] == [
        {
            "key": "task.timeout",
            "name": "Task timeout",
            "value": "3600",
            "description": PARAMETERS["parameters"][0]["description"],
        }
    ]


def _parameters_marquez(r: Reads) -> None:
    assert r.mz_run()["facets"][execution_parameters.NAME]["parameters"][0]["value"] == "3600"


def _subset_native(r: Reads) -> None:
    [entry] = [e for e in r.run()["dataset_facts"] if e["direction"] == "input"]
    expected = {
        "type": "partition",
        "partitions": [
            {
                "identifier": "2024-10-15-PL",
                "dimensions": {"business_date": "2024-10-15", "country": "PL"},
            },
            {"identifier": None, "dimensions": {"business_date": "2024-10-15", "country": "DE"}},
        ],
        "locations": [],
        "condition": SUBSET["inputCondition"],
    }
    assert entry["subset"] == expected
    [fact] = r.dataset(("postgres://db:5432", "shop.public.orders"))["run_facts"]
    assert fact["subset"] == expected


def _subset_marquez(r: Reads) -> None:
    [version] = r.mz_run()["inputDatasetVersions"]
    assert version["facets"][subset.NAME]["inputCondition"] == SUBSET["inputCondition"]


def _hierarchy_native(r: Reads) -> None:
    assert r.dataset()["hierarchy"] == [
        {"type": "DATABASE", "name": "my_db"},
        {"type": "SCHEMA", "name": "my_schema"},
        {"type": "TABLE", "name": "my_table"},
    ]
    assert r.dataset(INPUT)["hierarchy"] == []  # silent: no path


def _hierarchy_marquez(r: Reads) -> None:
    served = r.mz_dataset()["facets"][hierarchy.NAME]["hierarchy"]
    assert served == HIERARCHY[hierarchy.NAME]["hierarchy"]


CASES: dict[str, Checks] = {
    hierarchy.NAME: (
        lambda: derive(event(output_facets=HIERARCHY)),
        _hierarchy_native,
        _hierarchy_marquez,
    ),
    run_tests.NAME: (
        lambda: derive(event(run={run_tests.NAME: TESTS})),
        _tests_native,
        _tests_marquez,
    ),
    execution_parameters.NAME: (
        lambda: derive(event(run={execution_parameters.NAME: PARAMETERS})),
        _parameters_native,
        _parameters_marquez,
    ),
    subset.NAME: (
        lambda: derive(event(input_io={subset.NAME: SUBSET})),
        _subset_native,
        _subset_marquez,
    ),
}

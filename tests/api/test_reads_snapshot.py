"""The dataset detail's, search's, the run lists' and the job detail's answers, byte for
byte, on a fixed store (issue 42, ADR 0105).

These reads were rewritten for speed (fewer statements, rows read as tuples, less Python
per row): the answers must not change. tests/fixtures/reads_snapshot.json holds, for each
request below, the status and the body's SHA-256 and length that the code before that
rewrite gave on ``reads_snapshot_store``'s store (fixed ids and times, so the same bytes on
every run). A change that alters an answer on purpose regenerates it:
``READS_SNAPSHOT_WRITE=1 .venv/bin/pytest tests/api/test_reads_snapshot.py`` (and says why
in its commit).
"""

from pathlib import Path

import pytest

from tests.api import reads_snapshot_store
from tests.api.snapshots import assert_answers_unchanged

pytestmark = pytest.mark.django_db

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "reads_snapshot.json"
REQUESTS = [
    *(f"/api/v1/datasets/{i}" for i in (1, 2, 3, 4, 5, 7, 8, 9, 10, 14, 23, 41, 45, 55)),
    "/api/v1/datasets/40",  # retired: 404
    "/api/v1/datasets/999",  # none: 404
    "/api/v1/datasets/x1",  # not an id: 400
    "/api/v1/datasets/3?lineage=static",
    "/api/v1/datasets/3?lineage=observed",
    "/api/v1/datasets/lookup?namespace=postgres://db2:5432&name=schema_2.table_14",
    "/api/v1/datasets?limit=7",
    "/api/v1/search?q=table_1",
    "/api/v1/search?q=tabel_12",
    "/api/v1/search?q=schema_2",
    "/api/v1/search?q=orders region",
    "/api/v1/search?q=pii",
    "/api/v1/search?q=tier:gold",
    "/api/v1/search?q=team-orders",
    "/api/v1/search?q=customer_email&limit=5",
    "/api/v1/search?q=task&type=job&limit=4&offset=4",
    "/api/v1/search?q=warehouse.t21&type=dataset",
    "/api/v1/search?q=nothing+like+it",
    "/api/v1/runs",
    "/api/v1/runs?limit=20",
    "/api/v1/runs?limit=10&state=FAIL",
    "/api/v1/runs?job_id=3&limit=5",
    "/api/v1/jobs/3/runs?limit=6",
    "/api/v1/jobs/12/runs",  # a retired job's runs: listed by id
    "/api/v1/runs/90a071d6-a73f-529d-a5ef-eb75b4cec839",  # md5('r8'): run 8
    "/api/v1/runs/" + "1" * 8,  # none: 404
    "/api/v1/jobs/1",
    "/api/v1/jobs/3",
    "/api/v1/jobs/7",
    "/api/v1/jobs/12",  # retired: 404
    "/api/v1/jobs?limit=9",
]


def _next_pages(api, path: str, pages: int) -> list[str]:
    """The next ``pages`` cursor pages after ``path``, as the client follows them."""
    found = []
    for _ in range(pages):
        path = api.get(path).json()["next"]
        found.append(path.removeprefix("http://testserver"))
    return found


def test_the_read_answers_are_unchanged(api):
    reads_snapshot_store.build()
    requests = [
        *REQUESTS,
        *_next_pages(api, "/api/v1/runs?limit=20", 3),
        *_next_pages(api, "/api/v1/datasets?limit=7", 2),
    ]
    bodies = {path: api.get(path) for path in requests}
    assert_answers_unchanged(bodies, ANSWERS, "READS_SNAPSHOT_WRITE")
    # Not vacuous: the store shows what these reads show.
    detail = bodies["/api/v1/datasets/3"].json()
    assert detail["fields"] and detail["producing_jobs"] and detail["consuming_jobs"]
    assert bodies["/api/v1/datasets/2"].json()["column_lineage"]
    assert any(bodies[f"/api/v1/datasets/{i}"].json()["run_facts"] for i in (2, 3, 4, 5))
    assert "s3cret" not in bodies["/api/v1/datasets/8"].content.decode()
    assert detail["fields"][1]["description"]
    assert bodies["/api/v1/datasets/40"].status_code == 404
    assert len(bodies["/api/v1/search?q=table_1"].json()["results"]) > 3
    assert bodies["/api/v1/search?q=pii"].json()["results"]
    runs = bodies["/api/v1/runs?limit=10&state=FAIL"].json()["results"]
    assert len(runs) == 10 and runs[0]["error_message"]
    assert all(bodies[path].status_code == 200 for path in requests[-5:])

"""The figures docs/admin.md, docs/security.md, docs/marquez.md and docs/api.md promise are
the constants the code bounds by: a figure changed on one side alone fails here.
docs/marquez.md said a dataset version's reader facts came from the latest 800 input facts
per name while the read took ``len(RUN_FACTS) * RELATED_LIMIT`` (1,000: a fifth run fact,
``subset``, had been added); docs/api.md said /stats counts a table up to 10,000 rows while
it counted up to 100,000 (ADR 0190).
The behaviour behind each figure has its own test (docs/adr/0173-…, the audit's report)."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from api import pagination
from api.views import catalog as catalog_views
from catalog.admin import dashboard, impact, search, support
from catalog.facets import RUN_FACTS
from catalog.lineage import breaking, child_jobs
from catalog.lineage import impact as impact_report
from catalog.lineage import request as graph_request
from catalog.lineage.request import DEFAULT_MAX_NODES, EDGES_PER_NODE
from catalog.models import RUN_LINKS_COUNTED
from catalog.names.rules import EVENT_MATCH_SECONDS
from catalog.picture import build, geometry
from catalog.reads import run_facts, stats
from catalog.services import curation, rederive_jobs
from ingest import authentication

DOCS = Path(__file__).resolve().parents[2] / "docs"


def figure(number: float) -> str:
    """A number as the docs write it: 10,000; 0.3; 2."""
    return f"{number:,}" if isinstance(number, int) else f"{number:g}"


def said(doc: str, text: str) -> bool:
    """Whether ``doc`` says ``text``, wherever its lines break."""
    flat = re.sub(r"\s+", " ", (DOCS / doc).read_text(encoding="utf-8"))
    return text in flat


PROMISES = [
    ("admin.md", f"Results stop at the best {figure(search.RESULT_LIMIT)}"),
    ("admin.md", f"The page shows {figure(impact.PAGE_ITEMS)} items"),
    ("admin.md", f"*Download CSV* holds up to {figure(impact_report.MAX_ITEMS)}"),
    ("admin.md", f"The picture holds at most {figure(build.MAX_NODES)} nodes"),
    ("admin.md", f"Each table shows {figure(support.RELATED_LIMIT)} rows"),
    ("admin.md", f"more than {figure(curation.PREVIEW_SCAN_LIMIT)} names"),
    ("admin.md", f"the namespace's first {figure(curation.APPLY_SCAN_LIMIT)} names"),
    ("admin.md", f"in jobs of up to {figure(rederive_jobs.MAX_SELECTED_EVENTS)} events each"),
    ("admin.md", f"(up to {figure(rederive_jobs.MAX_SELECTED_EVENTS)})"),
    ("admin.md", f"the batch of {figure(rederive_jobs.REDERIVE_BATCH)} it was deriving"),
    ("admin.md", f"more than {figure(EVENT_MATCH_SECONDS)} s to match"),
    ("admin.md", f"links more than {figure(geometry.MAX_DRAWN_EDGES)} pairs"),
    ("admin.md", f"more than {figure(geometry.LAYERED_LIMIT)} points"),
    ("admin.md", f"at most {figure(geometry.MAX_LAYER_SPAN)} columns either side"),
    ("admin.md", f"at most {figure(build.MAX_COLUMN_EDGES)} column edges are drawn"),
    ("security.md", f"stop after {figure(geometry.ORDERING_SECONDS)} s"),
    ("security.md", f"within the {figure(int(authentication._CACHE_SECONDS))}-second"),
    ("security.md", f"each bounded ({figure(authentication._MAX_UNKNOWN)}, oldest"),
    ("marquez.md", f"capped at {figure(EDGES_PER_NODE * DEFAULT_MAX_NODES)} links"),
    ("marquez.md", f"child jobs (at most {figure(child_jobs.CHILDREN_PER_PARENT)})"),
    ("marquez.md", f"latest {figure(len(RUN_FACTS) * run_facts.RELATED_LIMIT)} input facts"),
    ("marquez.md", f"`LINEAGE_MAX_PAGE_BYTES` ({settings.LINEAGE['MAX_PAGE_BYTES'] >> 20} MiB)"),
    ("api.md", f"counted up to {figure(RUN_LINKS_COUNTED)}: past that the count says"),
    ("api.md", f"within {figure(int(authentication._CACHE_SECONDS))} seconds"),
    (
        "api.md",
        f"`limit` is 1-{pagination.MAX_PAGE_SIZE} (default {pagination.DEFAULT_PAGE_SIZE})",
    ),
    ("api.md", f"stops at {settings.LINEAGE['MAX_PAGE_BYTES'] >> 20} MiB of JSON"),
    ("api.md", f"(offset at most {pagination.MAX_OFFSET}:"),
    ("api.md", f"(at most {figure(catalog_views.RELATED_LIMIT)} of each, the first by id"),
    ("api.md", f"the newest of its latest {figure(run_facts.LATEST_TESTS_RUNS)} runs"),
    ("api.md", f"counted, up to {figure(stats.COUNT_CAP)}, the `counts_capped_at`"),
    (
        "api.md",
        f"dataset hops (1-{graph_request.MAX_DEPTH}, default {graph_request.DEFAULT_DEPTH})",
    ),
    (
        "api.md",
        f"(1-{graph_request.MAX_MAX_NODES}, default {figure(graph_request.DEFAULT_MAX_NODES)})",
    ),
    ("api.md", f"At most {figure(child_jobs.CHILDREN_PER_PARENT)} children"),
    ("api.md", f"`LINEAGE_MAX_COLUMN_EDGES` ({figure(settings.LINEAGE['MAX_COLUMN_EDGES'])})"),
    (
        "api.md",
        f"`depth` 1-{graph_request.MAX_DEPTH} (default {impact_report.DEFAULT_DEPTH}), "
        f"`max_items` 1-{figure(impact_report.MAX_ITEMS)} "
        f"(default {figure(impact_report.DEFAULT_MAX_ITEMS)})",
    ),
    ("api.md", f"names up to {figure(breaking.READERS_PER_CHANGE)} readers"),
]


@pytest.mark.parametrize(("doc", "text"), PROMISES, ids=[text for _, text in PROMISES])
def test_each_figure_the_docs_promise_is_the_constant_the_code_bounds_by(
    doc: str, text: str
) -> None:
    assert said(doc, text), f"docs/{doc} does not say {text!r}"


def test_the_dashboard_is_cached_for_the_minute_the_guide_says() -> None:
    assert dashboard.CACHE_SECONDS == 60 and said("admin.md", "cached for one minute")
    assert authentication._MAX_KNOWN == authentication._MAX_UNKNOWN

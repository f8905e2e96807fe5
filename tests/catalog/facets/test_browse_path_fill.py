"""Issue 41 item 4 (ADR 0093): datasets derived before the catalog read the hierarchy facet
have an empty ``browse_path``; migration 0032 and ``manage.py fill_browse_paths`` fill it
from the facet the row already holds, as derivation would (redacted), without a rederive,
a span of ids per transaction, idempotent and resumable."""

import importlib
import io
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection

from catalog.models import Dataset
from catalog.services import browse_paths
from tests.api.conftest import results
from tests.api.project_fixtures import derive
from tests.catalog.facets.test_hierarchy import _in
from tests.catalog.facets.world import OUTPUT

pytestmark = pytest.mark.django_db


@pytest.fixture
def before_0030() -> dict[str, int]:
    """Four datasets derived as today, then their paths emptied: the rows a store derived
    before migration 0030 has (the facet merged and kept, no path projected)."""
    derive(
        _in("t1", "db", "sales", "orders"),
        _in("t22", "db", "sales", "returns token=S3CRETh"),
        _in("t333", "other", "x"),
        _in("t4444"),  # no levels: no browse path
    )
    ids = {n: Dataset.objects.for_alias(OUTPUT[0], n).get().id for n in ("t1", "t22", "t333")}
    Dataset.objects.update(browse_path="")
    return ids


def _paths() -> dict[str, str]:
    return dict(Dataset.objects.values_list("name", "browse_path"))


def test_the_command_fills_what_derivation_would_and_the_filter_finds_it(api, before_0030):
    assert results(api.get("/api/v1/datasets", {"path": "db"})) == []
    out = io.StringIO()
    call_command("fill_browse_paths", "--span", "2", stdout=out)
    assert "3 filled" in out.getvalue()
    paths = _paths()
    assert paths["t1"] == "db/sales/orders" and paths["t333"] == "other/x"
    assert "S3CRETh" not in paths["t22"] and paths["t22"].startswith("db/sales/returns token=")
    assert paths["t4444"] == ""
    found = {row["id"] for row in results(api.get("/api/v1/datasets", {"path": "db/sales"}))}
    assert found == {before_0030["t1"], before_0030["t22"]}
    # What a rederive gives, the fill gave.
    filled = _paths()
    call_command("rederive", stdout=io.StringIO())
    assert _paths() == filled


def test_it_is_idempotent_and_resumes_past_an_id(before_0030):
    first = min(before_0030.values())
    done = browse_paths.fill(span=1, after=first)  # as if stopped after the first row
    assert done.filled == 2 and _paths()["t1" if before_0030["t1"] == first else "t22"] == ""
    assert browse_paths.fill().filled == 1  # the rest
    assert browse_paths.fill().filled == 0  # nothing left: rows with a path are skipped


def test_it_leaves_a_path_derivation_wrote(before_0030):
    Dataset.objects.filter(id=before_0030["t1"]).update(browse_path="kept/as/derived")
    browse_paths.fill()
    assert _paths()["t1"] == "kept/as/derived"


def test_migration_0032_runs_the_fill(before_0030):
    migration = importlib.import_module("catalog.migrations.0032_fill_browse_paths")
    assert migration.Migration.atomic is False  # each span commits on its own
    migration.fill(None, SimpleNamespace(connection=connection))
    assert _paths()["t333"] == "other/x"


def test_a_bad_span_is_refused():
    with pytest.raises(Exception, match="--span"):
        call_command("fill_browse_paths", "--span", "0", stdout=io.StringIO())

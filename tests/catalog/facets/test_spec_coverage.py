"""Every facet of the current spec has a row in the facet table (issue 41 item 8, ADR 0084).

The spec's schema directory is copied in tests/fixtures/openlineage/spec/facets (the
repository reads nothing outside itself); the table says which spec it was checked against
(``SPEC_CHECKED``) and this test fails when a schema file there has no row, or a row's
name or positions disagree with its schema.
"""

import re

from catalog.facets import FACETS, SPEC_CHECKED
from ingest.facets import SCHEMA_DIR
from tests.catalog.facets.spec_examples import FIXTURES, SCHEMAS, spec_facets


def uncovered(schema_files: set[str]) -> set[str]:
    covered = {schema for facet in FACETS for schema in facet.schemas}
    return schema_files - covered


def test_every_spec_schema_file_has_a_row():
    assert uncovered(set(spec_facets())) == set()


def test_a_new_spec_facet_without_a_row_fails_the_check():
    assert uncovered({*spec_facets(), "FreshlyAddedRunFacet"}) == {"FreshlyAddedRunFacet"}


def test_no_row_names_a_schema_the_spec_lacks():
    named = {schema for facet in FACETS for schema in facet.schemas}
    assert named - set(spec_facets()) == set()


def test_each_row_has_its_schemas_key_and_positions():
    for facet in FACETS:
        for schema in facet.schemas:
            key, positions = spec_facets()[schema]
            assert facet.name == key, schema
            assert set(positions) <= set(facet.appears), (schema, positions, facet.appears)


def test_the_table_names_the_spec_commit_the_fixtures_were_copied_at():
    commit = re.search(r"commit ([0-9a-f]{12})", SPEC_CHECKED)
    assert commit is not None
    sources = (FIXTURES / "SOURCES.md").read_text()
    schema_rows = [line for line in sources.splitlines() if line.startswith("| `spec/facets/")]
    assert len(schema_rows) == len(spec_facets())
    assert all(f"`{commit.group(1)}`" in row for row in schema_rows)


def test_ingest_validates_the_same_spec_the_table_was_checked_against():
    shipped = {path.name: path.read_bytes() for path in (SCHEMA_DIR / "facets").glob("*.json")}
    copied = {path.name: path.read_bytes() for path in SCHEMAS.glob("*.json")}
    assert shipped == copied

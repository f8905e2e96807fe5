"""``python -m catalog.facets``: print the facet table for docs/derivation.md."""

import sys

from catalog.facets import table_markdown

sys.stdout.write(table_markdown())

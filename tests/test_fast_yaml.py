"""tests/fast_yaml.py reads the documents the tests read as PyYAML's safe loader does."""

from pathlib import Path

import helm_python
import pytest
import yaml

from tests import fast_yaml
from tests.deploy.rendering import CHART, NAMESPACE, RELEASE, VARIANTS

ROOT = Path(__file__).resolve().parent.parent


def test_the_c_loader_is_used_where_pyyaml_has_it() -> None:
    assert fast_yaml.LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_the_committed_schema_reads_the_same() -> None:
    text = (ROOT / "docs" / "openapi.yaml").read_text()
    assert fast_yaml.load(text) == yaml.safe_load(text)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_rendered_chart_reads_the_same(variant: str) -> None:
    with helm_python.Chart.load(CHART) as chart:
        files = chart.render(VARIANTS[variant], name=RELEASE, namespace=NAMESPACE)
    texts = [text for path, text in sorted(files.items()) if not path.endswith("NOTES.txt")]
    assert texts
    for text in texts:
        assert list(fast_yaml.load_all(text)) == list(yaml.safe_load_all(text))

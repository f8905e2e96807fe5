"""values.yaml, ``secretKey``: "When empty the chart generates one on install and keeps it
on upgrades" (docs/deploy.md: "generated on install and kept if empty"). The key is what
Django signs admin sessions with: one generated anew on an upgrade logs every steward out,
and a migration hook whose copy of the Secret held another key than the pods' would sign
nothing the pods could read.

Helm's ``lookup`` needs a cluster (rendered here it finds nothing), so the chart is copied
with its one ``lookup`` of the installed Secret replaced by a value standing for what the
cluster holds; everything else is the chart's own template."""

import base64
import shutil
from pathlib import Path
from typing import Any

import helm_python
import yaml

from tests.deploy.rendering import CHART

LOOKUP = (
    '$existing := lookup "v1" "Secret" .Release.Namespace (include "lineage-catalog.fullname" .)'
)


def _keys(chart: Path, values: dict[str, Any], *, upgrade: bool) -> dict[str, str]:
    """Each rendered Secret's DJANGO_SECRET_KEY, by the Secret's name."""
    with helm_python.Chart.load(chart) as loaded:
        files = loaded.render(
            values, name="lc", namespace="lineage", is_install=not upgrade, is_upgrade=upgrade
        )
    return {
        doc["metadata"]["name"]: base64.b64decode(doc["data"]["DJANGO_SECRET_KEY"]).decode()
        for path, text in files.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc and doc["kind"] == "Secret"
    }


def _chart_in_a_cluster(tmp_path: Path) -> Path:
    chart = tmp_path / "lineage-catalog"
    shutil.copytree(CHART, chart)
    helpers = chart / "templates" / "_helpers.tpl"
    text = helpers.read_text()
    assert text.count(LOOKUP) == 1
    helpers.write_text(text.replace(LOOKUP, "$existing := .Values.installed"))
    (chart / "values.schema.json").unlink()  # it refuses the stand-in value
    return chart


def test_a_generated_key_is_the_same_in_the_secret_and_the_hooks_copy(tmp_path: Path) -> None:
    keys = _keys(_chart_in_a_cluster(tmp_path), {}, upgrade=False)
    assert set(keys) == {"lc-lineage-catalog", "lc-lineage-catalog-migrate"}
    (key,) = set(keys.values())
    assert len(key) >= 50


def test_an_upgrade_keeps_the_installed_key(tmp_path: Path) -> None:
    installed = "k" * 20 + "installed-by-the-first-helm-install" + "k" * 20
    stands_for = {"data": {"DJANGO_SECRET_KEY": base64.b64encode(installed.encode()).decode()}}
    keys = _keys(_chart_in_a_cluster(tmp_path), {"installed": stands_for}, upgrade=True)
    assert set(keys.values()) == {installed}


def test_a_given_key_wins_over_the_installed_one(tmp_path: Path) -> None:
    given = "g" * 60
    stands_for = {"data": {"DJANGO_SECRET_KEY": base64.b64encode(b"x" * 60).decode()}}
    values = {"installed": stands_for, "secretKey": given}
    keys = _keys(_chart_in_a_cluster(tmp_path), values, upgrade=True)
    assert set(keys.values()) == {given}

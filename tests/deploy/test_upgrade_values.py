"""docs/deploy.md, "Upgrade": the command that upgrades a release to this chart keeps the
operator's values and takes this chart's defaults for what they did not set.

``helm upgrade --reuse-values`` does not: it renders the new templates over the *previous*
chart's values (Helm replaces the new chart's defaults with the old release's coalesced
values), so a key a later chart added is missing. This chart's templates read keys that
earlier charts did not have (``webhooks``, for one): the upgrade the text gave failed with
``nil pointer evaluating interface {}.enabled``, and a key read through ``int64`` (such as
``database.readStatementTimeoutMs``) would silently become 0. ``--reset-then-reuse-values``
(Helm 3.14+) starts from the new chart's defaults and applies the operator's values again."""

import re
import shutil
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml

from tests.deploy.rendering import CHART

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "docs" / "deploy.md"
# What an operator set at install (docs/deploy.md, "Install"), kept by either flag.
OPERATOR = {
    "image": {"repository": "registry.example.com/platform/lineage-catalog"},
    "existingSecret": "lineage-catalog-credentials",
}
UPGRADE = {"image": {"tag": "0.2.0"}}  # the --set of the upgrade command


def _merged(*layers: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = _merged(merged[key], value)
            else:
                merged[key] = value
    return merged


def _render(chart: Path, values: dict[str, Any]) -> dict[str, str]:
    with helm_python.Chart.load(chart) as loaded:
        return loaded.render(
            values, name="lineage", namespace="lineage", is_upgrade=True, revision=2
        )


def test_the_documented_upgrade_takes_this_charts_defaults() -> None:
    (command,) = re.findall(r"^helm upgrade .*(?:\n  .*)*", DEPLOY.read_text(), re.MULTILINE)
    assert "--reset-then-reuse-values" in command
    assert not re.search(r"--reuse-values\b", command)


def test_an_earlier_charts_values_under_these_templates_fail_and_reset_then_reuse_renders(
    tmp_path: Path,
) -> None:
    """The previous chart as charts before the webhook sender were: its values without the
    ``webhooks`` block."""
    current = yaml.safe_load((CHART / "values.yaml").read_text())
    earlier = {key: value for key, value in current.items() if key != "webhooks"}
    # --reuse-values: the new templates over the earlier chart's values and the operator's.
    reused = tmp_path / "reused"
    shutil.copytree(CHART, reused)
    (reused / "values.yaml").write_text(yaml.safe_dump(_merged(earlier, OPERATOR)))
    with pytest.raises(helm_python.HelmError, match="nil pointer"):
        _render(reused, UPGRADE)
    # --reset-then-reuse-values: this chart's defaults, the operator's values again on top.
    files = _render(CHART, _merged(OPERATOR, UPGRADE))
    manifests = [
        doc
        for path, text in files.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc
    ]
    names = {m["metadata"]["name"] for m in manifests if m["kind"] == "Deployment"}
    assert "lineage-lineage-catalog-webhooks" in names
    (config,) = [m for m in manifests if m["kind"] == "ConfigMap"]
    assert config["data"]["LINEAGE_READ_STATEMENT_TIMEOUT_MS"] == "10000"
    (web,) = [
        m
        for m in manifests
        if m["kind"] == "Deployment" and m["metadata"]["name"] == "lineage-lineage-catalog-web"
    ]
    image = web["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/platform/lineage-catalog:0.2.0"


def test_under_reuse_values_a_number_an_earlier_chart_lacked_is_0(tmp_path: Path) -> None:
    """The statement timeout from a chart before it: --reuse-values renders no limit."""
    current = yaml.safe_load((CHART / "values.yaml").read_text())
    database = {k: v for k, v in current["database"].items() if k != "readStatementTimeoutMs"}
    reused = tmp_path / "reused"
    shutil.copytree(CHART, reused)
    (reused / "values.yaml").write_text(
        yaml.safe_dump(_merged({**current, "database": database}, OPERATOR))
    )
    files = _render(reused, UPGRADE)
    (config,) = [
        doc
        for path, text in files.items()
        if not path.endswith("NOTES.txt")
        for doc in yaml.safe_load_all(text)
        if doc and doc["kind"] == "ConfigMap"
    ]
    assert config["data"]["LINEAGE_READ_STATEMENT_TIMEOUT_MS"] == "0"  # 0: no limit

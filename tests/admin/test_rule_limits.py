"""Saving an alias rule in the admin refuses what RE2 cannot run, and the rule preview,
which runs in the steward's request, is bounded and says where it stopped (issue 27)."""

import pytest
from django.core.exceptions import ValidationError

from catalog.models import AliasRule
from catalog.services.rule_files import load_alias_rules

pytestmark = pytest.mark.django_db


def test_every_way_of_saving_a_rule_refuses_what_re2_cannot_run(steward_client) -> None:
    rule = AliasRule(slug="ahead", namespace="n", name_pattern=r"(?=a)a", target_namespace="n")
    with pytest.raises(ValidationError) as refused:
        rule.full_clean()
    assert "lookahead" in refused.value.message_dict["name_pattern"][0]
    with pytest.raises(ValueError, match=r"name_pattern refused: .*lookahead"):
        load_alias_rules([{"slug": "ahead", "namespace": "n", "name_pattern": r"(?=a)a"}])
    response = steward_client.post(
        "/admin/catalog/aliasrule/add/",
        {
            "slug": "ahead",
            "action": "equate",
            "namespace": "n",
            "name_pattern": r"(?<=a)b",
            "target_namespace": "n",
            "target_name": "x",
            "priority": 100,
            "enabled": "on",
        },
    )
    assert response.status_code == 200  # the form again, with the reason
    assert "RE2, the linear-time engine, cannot run lookahead and lookbehind" in (
        response.content.decode()
    )
    assert not AliasRule.objects.exists()


def test_the_preview_is_bounded_and_says_where_it_stopped(monkeypatch, steward_client) -> None:
    from catalog.services import curation
    from tests.api.factories import make_dataset

    for index in range(8):
        make_dataset(f"prod_t{index}", namespace="postgres://db:5432")
    rule = {
        "slug": "p",
        "action": "equate",
        "namespace": "postgres://db:5432",
        "name_pattern": r"prod_(.*)",
        "target_namespace": "postgres://db:5432",
        "target_name": r"\1",
        "priority": 100,
        "enabled": "on",
        "_preview": "1",
    }
    monkeypatch.setattr(curation, "PREVIEW_SCAN_LIMIT", 5)
    page = steward_client.post("/admin/catalog/aliasrule/add/", rule).content.decode()
    assert 'id="rule-preview-stopped">Preview stopped after 5 names' in page
    assert "Matches <strong>5</strong> existing alias(es) of 5 in the namespace" in page
    monkeypatch.setattr(curation, "PREVIEW_SECONDS", 0.0)
    page = steward_client.post("/admin/catalog/aliasrule/add/", rule).content.decode()
    assert "Preview stopped after 0 names (its 0 s budget)" in page
    assert not AliasRule.objects.exists()  # a preview saves nothing

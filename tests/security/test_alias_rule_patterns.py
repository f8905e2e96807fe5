"""Steward alias rules are regular expressions run on names readers send and in workers:
catastrophic patterns are refused when saved, and every match is bounded in time."""

import re
import time

import pytest
from django.core.exceptions import ValidationError

from catalog.models import AliasRule
from catalog.rules import active_rules, check_pattern, compile_pattern, fullmatch
from catalog.services import load_alias_rules

CATASTROPHIC = [r"(a+)+b", r"(x+x+)+y", r"(\w+\s?)+$", r"((ab)*)*c", r"(.*a){2,}", r"(a)\1"]
SANE = [r"prod_(.*)", r"(?P<db>[^.]+)\.(?P<table>.+)", r"(foo|bar)*\.t", r"(\d{4})-(\d{2})", "x"]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_catastrophic_patterns_are_refused(pattern) -> None:
    with pytest.raises(re.error):
        check_pattern(pattern)


@pytest.mark.parametrize("pattern", SANE)
def test_ordinary_patterns_are_accepted(pattern) -> None:
    check_pattern(pattern)
    assert compile_pattern(pattern).fullmatch("prod_x") is not None or pattern != "prod_(.*)"


@pytest.mark.django_db
def test_saving_refuses_a_catastrophic_pattern_in_the_admin_form_and_from_files() -> None:
    rule = AliasRule(
        slug="bad", namespace="postgres://db:5432", name_pattern=r"(a+)+b", target_namespace="x"
    )
    with pytest.raises(ValidationError) as refused:
        rule.full_clean()  # what the admin's ModelForm runs
    assert "name_pattern" in refused.value.message_dict
    with pytest.raises(ValueError, match="name_pattern refused"):
        load_alias_rules([{"slug": "bad", "namespace": "n", "name_pattern": r"(a+)+b"}])
    assert not AliasRule.objects.exists()


@pytest.mark.django_db
def test_a_stored_catastrophic_rule_is_skipped_not_run() -> None:
    AliasRule.objects.create(  # saved before patterns were checked
        slug="old", namespace="n", name_pattern=r"(a+)+b", target_namespace="n", target_name="x"
    )
    assert not active_rules()


@pytest.mark.django_db
def test_lookup_with_a_slow_pattern_is_answered_in_bounded_time(read_client) -> None:
    # Alternation under a repeat is allowed (usually harmless), so a slow one can be saved:
    # each match is cut off after its time limit and counts as no match.
    AliasRule.objects.create(
        slug="slow",
        action="rewrite",
        namespace="n",
        name_pattern=r"(a|aa)+b",
        target_namespace="n",
        target_name="x",
    )
    started = time.perf_counter()
    response = read_client.get("/api/v1/datasets/lookup", {"namespace": "n", "name": "a" * 60})
    assert response.status_code == 404
    assert time.perf_counter() - started < 5  # the unbounded match would take centuries
    assert fullmatch(compile_pattern(r"(a|aa)+b"), "a" * 60) is None

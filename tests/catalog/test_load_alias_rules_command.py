"""``manage.py load_alias_rules FILE``, run as an operator would: a file the admin's form
would refuse, a file that is not a rules file at all, or a huge one is a readable
command-line error, and the rules already stored stay exactly as they were."""

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import AliasRule
from catalog.services.rule_files import MAX_FILE_BYTES

pytestmark = pytest.mark.django_db

GOOD = {
    "slug": "warehouse",
    "action": "equate",
    "namespace": "hive://h:9083",
    "name_pattern": "(.*)",
    "target_namespace": "postgres://db:5432",
    "target_name": "\\1",
}


def _stored() -> list[tuple[object, ...]]:
    return list(AliasRule.objects.order_by("slug").values_list())


def _file(tmp_path: Path, rules: object) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    return path


HOSTILE = {
    "a number, not a rule": [1],
    "no slug": [{k: v for k, v in GOOD.items() if k != "slug"}],
    # Misspelt: would have kept the default pattern, (.*), which matches every name.
    "misspelt key": [{**GOOD, "slug": "new", "name_patern": "orders"}],
    "enabled as a word": [{**GOOD, "slug": "new", "enabled": "no"}],
    "unknown action": [{**GOOD, "slug": "new", "action": "bogus"}],
    "a list as slug": [{**GOOD, "slug": ["new"]}],
    "a slug with a space": [{**GOOD, "slug": "new rule"}],
    "priority past an integer": [{**GOOD, "slug": "new", "priority": 10**12}],
    "priority as a word": [{**GOOD, "slug": "new", "priority": "high"}],
    "NUL in a namespace": [{**GOOD, "slug": "new", "namespace": "n\x00x"}],
    "a number as pattern": [{**GOOD, "slug": "new", "name_pattern": 5}],
    "a new rule with no target namespace": [
        {k: v for k, v in {**GOOD, "slug": "new"}.items() if k != "target_namespace"}
    ],
    "a namespace too long": [{**GOOD, "slug": "new", "namespace": "n" * 501}],
    # The good rule first: the refusal of the second must take the first back too.
    "a good rule then a bad one": [
        {**GOOD, "target_name": "changed_\\1"},
        {**GOOD, "slug": "new", "action": "bogus"},
    ],
}


@pytest.mark.parametrize("rules", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_rule_the_admin_would_refuse_is_refused_and_nothing_changes(
    tmp_path: Path, rules: object
) -> None:
    call_command("load_alias_rules", str(_file(tmp_path, [GOOD])), verbosity=0)
    before = _stored()
    with pytest.raises(CommandError, match=r"^cannot load .*rules\.json: .*rule"):
        call_command("load_alias_rules", str(_file(tmp_path, rules)), "--replace")
    assert _stored() == before


def test_a_huge_or_unreadable_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    huge = tmp_path / "dump.json"
    with huge.open("wb") as stream:  # sparse: no disk, and a read of it all would be 64 MiB
        stream.truncate(4 * MAX_FILE_BYTES)
    with pytest.raises(CommandError, match=f"larger than {MAX_FILE_BYTES} bytes"):
        call_command("load_alias_rules", str(huge))
    binary = tmp_path / "rules.toml"
    binary.write_bytes(b"\xff\xfe[[rules]]")
    with pytest.raises(CommandError, match="cannot load"):
        call_command("load_alias_rules", str(binary))
    with pytest.raises(CommandError, match="cannot load"):
        call_command("load_alias_rules", str(tmp_path))
    assert _stored() == []


def test_a_rule_named_by_slug_alone_changes_only_the_keys_it_gives(tmp_path: Path) -> None:
    call_command("load_alias_rules", str(_file(tmp_path, [GOOD])), verbosity=0)
    call_command(
        "load_alias_rules", str(_file(tmp_path, [{"slug": "warehouse", "enabled": False}]))
    )
    rule = AliasRule.objects.get()
    assert (rule.enabled, rule.namespace, rule.target_namespace) == (
        False,
        GOOD["namespace"],
        GOOD["target_namespace"],
    )

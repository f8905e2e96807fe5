"""``manage.py load_alias_rules FILE [--replace]``: upsert steward alias rules by slug."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.services.rule_files import load_alias_rules, read_rules_file


class Command(BaseCommand):
    help = (
        "Load alias rules from a JSON list or a TOML file with [[rules]] tables (keys: slug, "
        "action equate|rewrite, namespace, name_pattern, target_namespace, target_name, "
        "priority, enabled, description). Run `rederive` afterwards to apply them to the log."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--replace", action="store_true", help="delete rules not in FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rules = read_rules_file(options["path"])
            created, updated, deleted = load_alias_rules(rules, replace=options["replace"])
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"cannot load {options['path']}: {error}") from error
        self.stdout.write(f"alias rules: {created} created, {updated} updated, {deleted} deleted")

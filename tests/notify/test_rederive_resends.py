"""docs/notifications.md: "A rederive ... records nothing new, so nothing is sent again",
exactly: with the same code, rules and settings. A change's natural key is made of what is
stored (the alias's name key, the schemas' hashes over their stored, redacted fields), so a
rederive under a new redaction key that rewrites a column's name stores another change,
which is new and sent, once, under the redacted name; the old one is withdrawn."""

import pytest
from django.conf import settings
from django.test import override_settings

from catalog.models import DatasetChange, WebhookDelivery, WebhookSubscription
from catalog.services.derive import rederive
from core.redaction import REDACTED
from tests.api.project_fixtures import derive
from tests.catalog.conftest import dataset, facet, run_event

pytestmark = pytest.mark.django_db


def load(fields: list[tuple[str, str]], seconds: int, run: str) -> dict:
    schema = facet(fields=[{"name": name, "type": kind} for name, kind in fields])
    out = dataset("postgres://db:5432", "orders", schema=schema)
    return run_event("COMPLETE", seconds, run, ("etl", "load"), outputs=[out])


def sent() -> list[str]:
    return sorted(WebhookDelivery.objects.values_list("payload__data__column", flat=True))


def test_a_rederive_sends_again_only_what_a_changed_setting_changed() -> None:
    WebhookSubscription.objects.create(name="all", url="https://hooks.example.com/all")
    derive(
        load([("id", "bigint"), ("ticket=T-1", "text")], 0, "00000000-0000-0000-0000-000000000001"),
        load([("id", "bigint")], 100, "00000000-0000-0000-0000-000000000002"),
    )
    assert sent() == ["ticket=T-1"]
    rederive()  # same code, rules and settings: nothing new
    assert sent() == ["ticket=T-1"]
    keys = [*settings.LINEAGE["REDACT_KEYS"], "ticket"]
    with override_settings(LINEAGE={**settings.LINEAGE, "REDACT_KEYS": keys}):
        rederive()  # the column's stored name changes: another change, new
        assert sent() == [f"ticket={REDACTED}", "ticket=T-1"]
        rederive()  # and once
        assert sent() == [f"ticket={REDACTED}", "ticket=T-1"]
    assert list(DatasetChange.objects.values_list("column", flat=True)) == [f"ticket={REDACTED}"]

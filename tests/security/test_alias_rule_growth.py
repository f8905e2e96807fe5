"""A steward's rewrite rules apply once each, in turn: rules whose templates repeat a group
(``\\1\\1``) double a name per rule. RE2 keeps each match linear in the name, but not the name:
21 such rules made a 10-character name 21 MB, a lookup request took 12 s and one event's
derivation 11 s (past its 2 s matching budget, which was checked only before the first
rule), and a few rules more exhaust a worker's memory. A rule whose result would be more
than ``NAME_GROWTH_MAX`` longer than its input is not applied, in derivation and lookups
alike (docs/derivation.md, "Aliases and rules")."""

import time
import uuid

import pytest

from catalog.names.rules import NAME_GROWTH_MAX
from catalog.services.rule_files import load_alias_rules

pytestmark = pytest.mark.django_db

NS = "postgres://db:5432"
DOUBLINGS = 21


def doubling_rules() -> None:
    load_alias_rules(
        [
            {
                "slug": f"double-{number:02}",
                "action": "rewrite",
                "namespace": NS,
                "name_pattern": "(.*)",
                "target_namespace": NS,
                "target_name": r"\1\1",
            }
            for number in range(DOUBLINGS)
        ]
    )


def test_doubling_rewrites_stop_at_the_growth_limit_in_derivation_and_lookup(
    ingest_client: object, read_client: object
) -> None:
    from catalog.models import DatasetAlias
    from ingest.models import Event
    from tests.admin.conftest import ingest_and_derive, run_event

    doubling_rules()
    started = time.perf_counter()
    ingest_and_derive(
        ingest_client,  # type: ignore[arg-type]
        [
            run_event("doubled", "COMPLETE", str(uuid.uuid4()), [(NS, "abcdefghij")]),
            run_event("other", "COMPLETE", str(uuid.uuid4()), [("kafka://k:9092", "t")]),
        ],
    )
    derived_in = time.perf_counter() - started
    assert derived_in < 5, derived_in  # was 11 s, and exponential in the number of rules
    statuses = set(Event.objects.values_list("derivation_status", flat=True))
    assert statuses == {"derived"}, statuses
    # Seven doublings fit: 10 x 2**8 = 2,560 > 10 + 2,000, so the eighth and every later rule
    # find the name too long to double, and the name stops at 10 x 2**7 = 1,280 characters.
    (alias,) = DatasetAlias.objects.filter(namespace=NS)
    assert alias.name == "abcdefghij" * 2**7
    assert len(alias.name) <= 10 + NAME_GROWTH_MAX
    # A lookup of the name as sent applies the same rules, as fast, and finds it.
    started = time.perf_counter()
    response = read_client.get(  # type: ignore[attr-defined]
        "/api/v1/datasets/lookup", {"namespace": NS, "name": "abcdefghij"}
    )
    assert time.perf_counter() - started < 2
    assert response.status_code == 200, response.content

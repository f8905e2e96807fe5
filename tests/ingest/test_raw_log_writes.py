"""docs/architecture.md invariant 1: a stored event is never changed, only its derivation
status moves; it leaves the log only by retention or a namespace purge.

Two views of the one promise. The structural one reads every statement the service's code
spells (every module of the apps and config, found by walking them, so a new module is
covered): an ``UPDATE ingest_event`` may set only the derivation columns, a ``DELETE FROM
ingest_event`` or an ORM write on ``Event`` lives only in the modules the doc names. The
runtime one puts a trigger on ``ingest_event`` in the test's own transaction (rolled back
with it) that refuses any other change, then drives ingest, derivation, every rederive,
the sweep and retention over the corpus: a write the static walk cannot see (an ORM
``update`` on a queryset handed round) fails there.

Migrations are left out of the walk: one that adds a column fills it from the stored
payload (``0008_event_schema_url_from_payload``), which reads the event, it does not
change it.
"""

import ast
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError
from django.utils import timezone

from catalog.services.derive import derive_events, rederive, sweep_underived
from catalog.services.rederive_jobs import rederive_event_ids
from catalog.services.retention import apply_retention
from ingest.models import Event
from tests.catalog.helpers import corpus_records, store

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("config", "core", "ingest", "catalog", "api")
# What a derivation batch or a rederive may move (ingest/derivation_status.py).
DERIVATION_COLUMNS = {"derivation_status", "derived_at", "derivation_error"}
# Where an event may leave the log: retention (docs/deploy.md) and the purge of a namespace
# (ADR 0078), both operators' choices.
MAY_DELETE = {"catalog/services/retention.py", "catalog/services/purge.py"}

_UPDATE = re.compile(
    r"\bUPDATE\s+ingest_event\b(?:\s+(?:AS\s+)?(?!SET\b)\w+)?\s+SET\s+(?P<set>.*?)"
    r"(?:\bFROM\b|\bWHERE\b|\bRETURNING\b|$)",
    re.IGNORECASE | re.DOTALL,
)
_DELETE = re.compile(r"\bDELETE\s+FROM\s+ingest_event\b|\bTRUNCATE\b[^;]*\bingest_event\b", re.I)
_ORM_WRITES = {"update", "delete", "bulk_update", "save", "update_or_create"}


def _modules() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _texts(tree: ast.AST) -> Iterator[str]:
    """Every string the module spells, f-strings with their holes as ``?``."""
    pieces = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in pieces:  # read whole, with its f-string
                yield node.value
        elif isinstance(node, ast.JoinedStr):
            yield "".join(
                part.value if isinstance(part, ast.Constant) else "?" for part in node.values
            )


def set_columns(statement: str) -> list[set[str]]:
    """The columns each ``UPDATE ingest_event`` of ``statement`` sets."""
    found = []
    for match in _UPDATE.finditer(statement):
        assignments = re.sub(r"\([^()]*\)", "", match["set"])  # now(), coalesce(...)
        found.append(set(re.findall(r"(\w+)\s*=(?!=)", assignments)))
    return found


def _orm_writes(tree: ast.AST) -> Iterator[int]:
    """Lines where a write method is called on an expression rooted at ``Event``."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _ORM_WRITES
        ):
            receiver = node.func.value
            while isinstance(receiver, ast.Attribute | ast.Call):
                receiver = receiver.func if isinstance(receiver, ast.Call) else receiver.value
            if isinstance(receiver, ast.Name) and receiver.id == "Event":
                yield node.lineno


def raw_log_breaks() -> list[str]:
    broken = []
    for path in _modules():
        name = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(), filename=name)
        for text in _texts(tree):
            for columns in set_columns(text):
                if not columns <= DERIVATION_COLUMNS:
                    broken.append(f"{name}: UPDATE ingest_event sets {sorted(columns)}")
            if _DELETE.search(text) and name not in MAY_DELETE:
                broken.append(f"{name}: removes events: {text.strip()[:60]!r}")
        broken += [f"{name}:{line}: an ORM write on Event" for line in _orm_writes(tree)]
    return broken


def test_the_walk_reads_the_derivation_status_statements() -> None:
    """The pattern finds the statements that do move the status (else it proves nothing)."""
    text = (ROOT / "ingest/derivation_status.py").read_text()
    found = [columns for piece in _texts(ast.parse(text)) for columns in set_columns(piece)]
    assert {"derivation_status", "derived_at", "derivation_error"} in found
    assert len(found) == 3, found


def test_only_the_derivation_columns_of_a_stored_event_are_ever_updated() -> None:
    assert raw_log_breaks() == []


@pytest.mark.parametrize(
    "planted",
    [
        "UPDATE ingest_event SET payload = %s WHERE id = %s",
        "update ingest_event e set derived_at = now(), job_name = f.n from f where e.id = f.id",
        "UPDATE ingest_event SET derivation_status = '?', facet_problems = NULL",
    ],
)
def test_a_planted_update_of_the_event_is_named(planted: str) -> None:
    columns = set_columns(planted)
    assert columns and not all(found <= DERIVATION_COLUMNS for found in columns)


def test_a_planted_orm_write_and_delete_are_named(tmp_path, monkeypatch) -> None:
    planted = tmp_path / "ingest"
    planted.mkdir()
    (planted / "planted.py").write_text(
        "Event.objects.filter(id=1).update(payload={})\n"
        'SQL = "DELETE FROM ingest_event WHERE id = 1"\n'
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGES", ("ingest",))
    assert raw_log_breaks() == [
        "ingest/planted.py: removes events: 'DELETE FROM ingest_event WHERE id = 1'",
        "ingest/planted.py:1: an ORM write on Event",
    ]


# Refuses, in the test's transaction only, any change of a stored event but its
# derivation columns (the rule the walk above reads in the code).
_GUARD = """
CREATE FUNCTION pg_temp.raw_log_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (to_jsonb(NEW) - {columns}) IS DISTINCT FROM (to_jsonb(OLD) - {columns})
  THEN RAISE EXCEPTION 'event % changed beyond its derivation status', OLD.id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER raw_log_guard BEFORE UPDATE ON ingest_event
  FOR EACH ROW EXECUTE FUNCTION pg_temp.raw_log_guard();
"""


@pytest.fixture
def guarded_log(db: None) -> None:
    with connection.cursor() as cursor:
        names = ", ".join(f"'{name}'" for name in sorted(DERIVATION_COLUMNS))
        columns = f"ARRAY[{names}]"
        cursor.execute(_GUARD.replace("{columns}", columns))


def _kept() -> dict[int, tuple]:
    fields = [f.attname for f in Event._meta.concrete_fields if f.attname not in DERIVATION_COLUMNS]
    return {row[0]: row for row in Event.objects.order_by("id").values_list(*fields)}


def test_the_guard_refuses_a_change_of_a_stored_event(guarded_log) -> None:
    [event_id] = store(corpus_records()[:1])
    Event.objects.filter(id=event_id).update(derivation_status="failed")  # allowed
    with pytest.raises(DatabaseError, match="beyond its derivation status"), transaction.atomic():
        Event.objects.filter(id=event_id).update(job_name="changed")


def test_derivation_rederive_sweep_and_retention_change_no_stored_event(guarded_log) -> None:
    ids = store(corpus_records())
    assert len(ids) > 50
    before = _kept()
    derive_events(ids)
    rederive()
    rederive(since=timezone.now() - timedelta(days=3650))
    rederive_event_ids(ids[: len(ids) // 2])
    Event.objects.filter(id__in=ids[:5]).update(derivation_status="pending")
    sweep_underived(older_than_seconds=0)
    # Derivation isolates a failing statement and marks its event failed: a write the guard
    # refused shows here, not as an exception.
    assert set(Event.objects.values_list("derivation_status", flat=True)) == {"derived"}
    assert _kept() == before
    # Retention, a day past every event's window, removes (allowed) and changes nothing it
    # keeps; the guard is on throughout.
    apply_retention(365, now=timezone.now() + timedelta(days=800))
    kept = _kept()
    assert len(kept) < len(before)
    assert all(before[event_id] == row for event_id, row in kept.items())

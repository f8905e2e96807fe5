"""The per-namespace summary (ADR 0121) equals a whole-table recount after every write path:
derivation (any order, twice), merges and splits, display names, retire and restore (of a
dataset, a job, a namespace), revival, purge, retention, full and partial rederive, the
admin's deletes and edits, raw SQL; and the functions the migrations installed are the ones
catalog.models.namespaces builds now."""

import random
import uuid
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.db.models import Max, Min

from catalog.models import Dataset, DatasetAlias, Job, Namespace, Retirement
from catalog.models.namespaces import FUNCTIONS, install_sql
from catalog.services import curation, display_names, retirement
from catalog.services.derive import derive_events, rederive
from catalog.services.purge import purge_namespace
from catalog.services.retention import apply_retention
from catalog.services.retirement import Actor
from ingest.models import Event
from tests.catalog.conftest import T0, dataset, facet, run_event
from tests.catalog.helpers import openlineage, store
from tests.catalog.test_tasks_and_claims import derive_each_in_its_own_thread

pytestmark = pytest.mark.django_db

NAMESPACES = ["pg://db", "s3://lake", "hive://meta:9083", "kafka://b:9092", "ns"]


def recount() -> dict[tuple[int, str], tuple[int, Any, Any]]:
    """The oracle: the whole-table aggregate of current rows, as the reads were before."""
    found = {}
    for kind, model in ((1, Dataset), (2, Job)):
        counts = model.objects.current().namespace_counts()
        spans = (
            model.objects.current()
            .order_by()
            .values("namespace")
            .annotate(lo=Min("first_seen"), hi=Max("last_seen"))
        )
        for row in spans:
            found[(kind, row["namespace"])] = (counts[row["namespace"]], row["lo"], row["hi"])
    return found


def summary() -> dict[tuple[int, str], tuple[int, Any, Any]]:
    return {
        (row.kind, row.namespace): (row.members, row.created, row.updated)
        for row in Namespace.objects.all()
    }


def agrees(step: str) -> None:
    assert summary() == recount(), step


def _event(rng: random.Random, seconds: float) -> dict[str, Any]:
    def some_dataset() -> dict[str, Any]:
        namespace = rng.choice(NAMESPACES[:4])
        name = f"t{rng.randrange(8)}"
        if rng.random() < 0.2:  # a symlink to another namespace's name: merges datasets
            other = {"namespace": rng.choice(NAMESPACES[:4]), "name": f"t{rng.randrange(8)}"}
            return dataset(
                namespace, name, symlinks=facet(identifiers=[{**other, "type": "TABLE"}])
            )
        return dataset(namespace, name)

    return run_event(
        rng.choice(["START", "COMPLETE", "FAIL"]),
        seconds,
        str(uuid.UUID(int=rng.randrange(1, 12))),
        job=(rng.choice(NAMESPACES), f"job{rng.randrange(6)}"),
        inputs=[some_dataset() for _ in range(rng.randrange(3))],
        outputs=[some_dataset() for _ in range(rng.randrange(3))],
    )


def _later(event_ids: list[int]) -> None:
    """As if received after every retirement so far (in a test's one transaction, now()
    never moves), so they revive what they name."""
    last = Retirement.objects.order_by("-retired_at").values_list("retired_at", flat=True).first()
    if last is not None:
        Event.objects.filter(pk__in=event_ids).update(received_at=last + timedelta(seconds=1))


def _any(rng: random.Random, model: Any) -> Any:
    ids = sorted(model.objects.values_list("id", flat=True))
    return model.objects.get(id=rng.choice(ids)) if ids else None


def _paths(rng: random.Random, actor: Actor, user: Any) -> dict[str, Any]:
    clock = iter(range(0, 100_000, 7))

    def derive_some() -> None:
        events = [_event(rng, rng.randrange(-3000, 3000)) for _ in range(rng.randrange(1, 6))]
        ids = store([openlineage(event) for event in events])
        _later(ids)
        rng.shuffle(ids)
        derive_events(ids)
        derive_events(ids)  # twice: nothing moves

    def retire_one() -> None:
        obj = _any(rng, rng.choice([Dataset, Job]))
        if obj is not None:
            retirement.retire(obj, actor, "gone")

    def restore_one() -> None:
        row = Retirement.objects.active().exclude(object_id=None).order_by("?").first()
        model = Dataset if row is not None and row.kind == 1 else Job
        obj = model.objects.filter(id=row.object_id).first() if row is not None else None
        if obj is not None:  # (a deleted object's retirement stays, with nothing to show)
            retirement.restore(obj, actor)

    def retire_namespace() -> None:
        retirement.retire_namespace(rng.choice(NAMESPACES), actor, "decommissioned")

    def restore_namespace() -> None:
        retirement.restore_namespace(rng.choice(NAMESPACES), actor)

    def pin_name() -> None:
        alias = DatasetAlias.objects.exclude(dataset=None).order_by("?").first()
        if alias is not None:
            display_names.pin_display_name(user, alias)

    def split() -> None:
        shared = [
            a for a in DatasetAlias.objects.exclude(dataset=None) if a.dataset.aliases.count() > 1
        ]
        if shared:
            curation.split_alias(user, rng.choice(shared))

    def purge() -> None:
        purge_namespace(rng.choice(NAMESPACES[:4]), by="test")

    def retention() -> None:
        apply_retention(days=1, now=T0 + timedelta(days=1, seconds=next(clock)))

    def rederive_all() -> None:
        rederive()

    def rederive_since() -> None:
        rederive(since=T0 + timedelta(seconds=rng.randrange(-3000, 3000)))

    def admin_delete() -> None:
        obj = _any(rng, rng.choice([Dataset, Job]))
        if obj is not None:
            obj.delete()  # as the admin's delete action does (cascades included)

    def admin_edit() -> None:
        obj = _any(rng, rng.choice([Dataset, Job]))
        if obj is not None:  # a span shrunk and the namespace changed, by hand
            obj.namespace = rng.choice(NAMESPACES)
            obj.first_seen = T0 + timedelta(seconds=rng.randrange(0, 100))
            obj.last_seen = obj.first_seen if rng.random() < 0.5 else None
            obj.save()

    def raw_sql() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE catalog_dataset SET last_seen = first_seen WHERE id %% 3 = %s",
                [rng.randrange(3)],
            )
            cursor.execute(
                "UPDATE catalog_job SET namespace = %s WHERE id %% 5 = %s",
                [rng.choice(NAMESPACES), rng.randrange(5)],
            )

    return {
        name: path for name, path in locals().items() if callable(path) and name not in ("clock",)
    }


@pytest.mark.parametrize("seed", range(3))
def test_the_summary_is_a_recount_after_every_write_path(seed: int) -> None:
    rng = random.Random(seed)
    user = get_user_model().objects.create_user(f"stew{seed}", is_staff=True)
    actor = Actor.of(user)
    paths = _paths(rng, actor, user)
    for _ in range(3):
        paths["derive_some"]()
        agrees("derive_some")
    # Every path twice, in an order of the seed's, each followed by more derivation or not.
    for round_ in range(2):
        for name in rng.sample(sorted(paths), len(paths)):
            for step in [name] + (["derive_some"] if rng.random() < 0.5 else []):
                paths[step]()
                agrees(f"round {round_}: {step} (after {name})")
    # The mix may end with nothing left (a seed's walk through purges, retention and a
    # rederive did, once a purge also removed what only its events had named): derive more.
    paths["derive_some"]()
    agrees("derive_some (last)")
    assert summary(), "the mix left something to count"
    # The repair recounts to the same rows.
    out = StringIO()
    call_command("refresh_namespaces", stdout=out)
    assert out.getvalue().startswith(f"refresh_namespaces: {len(summary())} summary row(s)")
    agrees("refresh_namespaces")


def test_a_namespace_leaves_the_summary_with_its_last_row_and_the_reads_follow(
    read_client,
) -> None:
    events = [
        run_event("COMPLETE", 0, str(uuid.uuid4()), job=("a", "j"), outputs=[dataset("b", "t")]),
        run_event("COMPLETE", 60, str(uuid.uuid4()), job=("a", "k")),
    ]
    derive_events(store([openlineage(event) for event in events]))
    body = read_client.get("/api/v1/namespaces").json()
    assert [(r["namespace"], r["jobs"], r["datasets"]) for r in body["results"]] == [
        ("a", 2, 0),
        ("b", 0, 1),
    ]
    Dataset.objects.all().delete()
    body = read_client.get("/api/v1/namespaces").json()
    assert [(r["namespace"], r["jobs"], r["datasets"]) for r in body["results"]] == [("a", 2, 0)]
    Job.objects.filter(name="k").update(last_seen=T0)  # the namespace's last moved back
    agrees("span shrunk by an update")
    assert Namespace.objects.spans("a") == [("a", T0, T0)]
    assert Namespace.objects.spans("b") == []


def test_the_installed_functions_are_the_ones_the_module_builds() -> None:
    """The migration holds a frozen copy; a change to catalog.models.namespaces (or to
    ``retired_sql``, which it spells with) needs a migration that installs it again."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE proname LIKE 'catalog\\_namespace\\_%'"
        )
        installed = dict(cursor.fetchall())
        cursor.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'catalog\\_namespace\\_%'"
        )
        triggers = cursor.fetchone()[0]
    assert installed == {name: body for name, (_, body) in FUNCTIONS.items()}
    assert triggers == sum(1 for sql in install_sql() if sql.startswith("CREATE TRIGGER"))


@pytest.mark.django_db(transaction=True)
def test_concurrent_batches_of_crossing_namespaces_keep_it_a_recount() -> None:
    """Workers deriving at once, each batch's jobs in one namespace and its datasets in
    the others (and new in each): each statement's trigger locks the summary rows it
    changes in one order, so they wait for each other (a deadlock is retried), and
    what they leave is the recount."""
    events = [
        run_event(
            "COMPLETE",
            n,
            str(uuid.uuid4()),
            job=(NAMESPACES[n % 4], f"job{n}"),
            inputs=[dataset(NAMESPACES[(n + 1) % 4], f"in{n}")],
            outputs=[dataset(NAMESPACES[(n + 3) % 4], f"out{n % 3}")],
        )
        for n in range(8)
    ]
    derive_each_in_its_own_thread(store([openlineage(event) for event in events]))
    agrees("concurrent batches")
    assert sum(row.members for row in Namespace.objects.filter(kind=2)) == 8


def test_a_statement_that_moves_no_count_or_span_writes_no_summary_row() -> None:
    events = [
        run_event("COMPLETE", n, str(uuid.uuid4()), job=("a", f"j{n}"), outputs=[dataset("b", "t")])
        for n in range(3)
    ]
    derive_events(store([openlineage(event) for event in events]))

    def versions() -> list[tuple[str, str]]:  # a row written anew gets a new ctid
        with connection.cursor() as cursor:
            cursor.execute("SELECT namespace, ctid::text FROM catalog_namespace ORDER BY 1")
            return list(cursor.fetchall())

    before = versions()
    Job.objects.update(description="nothing the summary shows")
    Dataset.objects.update(description="nor this")
    assert versions() == before
    Job.objects.filter(name="j0").update(last_seen=T0 + timedelta(days=1))
    assert versions()[0] != before[0] and versions()[1] == before[1]
    agrees("one span grown")

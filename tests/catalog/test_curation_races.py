"""A steward's merge is one transaction (catalog.services.curation.merge_as_steward): two
merges of the same pair at once (two connections, the real PostgreSQL) both get a rule,
neither a database error; a merge or a background re-derive whose admin-log entry cannot
be written stores nothing; a pin of an alias a merge moved since it was read titles the
dataset the alias is in now, and an unpin of a dataset gone since is nothing to do
(catalog.services.display_names); a label on a dataset merged away since lands on the
survivor, one on a job gone since is stored by name (catalog.services.labels); of two
splits of a two-name dataset at once (catalog.services.curation.split_alias) the second is
refused as the split of an only name."""

import threading
import time
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.db import connection

from catalog.models import (
    AliasReason,
    AliasRule,
    Dataset,
    DatasetAlias,
    Job,
    LabelKind,
    RederiveJob,
)
from catalog.names.naming import job_key, key_hash
from catalog.services import curation, display_names, labels, rederive_jobs


def _pair() -> tuple[Dataset, Dataset]:
    return (
        Dataset.objects.create(namespace="pg://db", name="orders"),
        Dataset.objects.create(namespace="pg://db", name="orders_v1"),
    )


def _named_by_their_own_aliases(*datasets: Dataset) -> None:
    for dataset in datasets:
        DatasetAlias.objects.create(
            namespace=dataset.namespace,
            name=dataset.name,
            key_hash=key_hash(dataset.namespace, dataset.name),
            reason=AliasReason.EVENT,
            dataset=dataset,
        )


def _waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


@pytest.mark.django_db(transaction=True)
def test_two_merges_of_the_same_pair_at_once_both_get_a_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first has inserted its rule and not committed; the second's insert of the same
    slug waits for it, is refused once it commits, and takes the next suffix."""
    survivor, other = _pair()
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    inserted, commit = threading.Event(), threading.Event()
    log = curation.log_curation

    def log_then_wait(*args: Any, **kwargs: Any) -> Any:
        entry = log(*args, **kwargs)
        if not inserted.is_set():  # the first merge only
            inserted.set()
            assert commit.wait(10)
        return entry

    monkeypatch.setattr(curation, "log_curation", log_then_wait)
    errors: list[BaseException] = []
    pids: list[int] = []

    def merge() -> None:
        try:
            connection.ensure_connection()
            pids.append(connection.connection.info.backend_pid)
            curation.merge_as_steward(steward, survivor, other)
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    first, second = threading.Thread(target=merge), threading.Thread(target=merge)
    first.start()
    assert inserted.wait(10)
    second.start()
    deadline = time.monotonic() + 10
    while not (len(pids) == 2 and _waiting_for_a_lock(pids[1])):
        assert time.monotonic() < deadline, "the second merge never waited for the first"
        time.sleep(0.01)
    commit.set()
    first.join(10)
    second.join(10)
    assert not errors, errors
    slug = f"steward-merge-{other.pk}-into-{survivor.pk}"
    assert sorted(AliasRule.objects.values_list("slug", flat=True)) == [slug, f"{slug}-2"]


@pytest.mark.django_db
def test_a_merge_or_a_rederive_whose_log_entry_fails_stores_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    survivor, other = _pair()
    steward = get_user_model().objects.create_user("stew", is_staff=True)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the admin log refused it")

    monkeypatch.setattr(curation, "log_curation", refuse)
    monkeypatch.setattr(rederive_jobs, "log_curation", refuse)
    with pytest.raises(RuntimeError):
        curation.merge_as_steward(steward, survivor, other)
    with pytest.raises(RuntimeError):
        rederive_jobs.schedule_rederive(steward, event_ids=[1])
    assert not AliasRule.objects.exists()
    assert not RederiveJob.objects.exists()


@pytest.mark.django_db
def test_a_pin_of_an_alias_a_merge_moved_titles_the_dataset_it_is_in_now() -> None:
    survivor, other = _pair()
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    _named_by_their_own_aliases(survivor, other)
    stale = DatasetAlias.objects.get(name="orders_v1")  # read by the steward's page
    DatasetAlias.objects.filter(pk=stale.pk).update(dataset=survivor)  # a merge, since
    Dataset.objects.filter(pk=other.pk).delete()
    assert display_names.pin_display_name(steward, stale).pk == survivor.pk
    survivor.refresh_from_db()
    assert (survivor.name, survivor.display_rank) == ("orders_v1", display_names.PINNED)


@pytest.mark.django_db
def test_an_unpin_of_a_dataset_a_merge_took_since_it_was_read_is_nothing_to_do() -> None:
    survivor, other = _pair()
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    stale = Dataset.objects.get(pk=other.pk)  # read by the steward's page
    Dataset.objects.filter(pk=other.pk).delete()  # merged into the survivor since
    assert display_names.unpin_display_name(steward, stale) is None
    assert display_names.unpin_display_name(steward, survivor).pk == survivor.pk


@pytest.mark.django_db
def test_a_label_on_a_dataset_a_merge_took_since_it_was_read_lands_on_the_survivor() -> None:
    survivor, other = _pair()
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    _named_by_their_own_aliases(survivor, other)
    stale = Dataset.objects.get(pk=other.pk)  # read by the steward's form
    DatasetAlias.objects.filter(name="orders_v1").update(dataset=survivor)  # a merge, since
    Dataset.objects.filter(pk=other.pk).delete()
    labels.label_holder(steward, stale, LabelKind.TAG, "pii")
    survivor.refresh_from_db()
    assert "pii" in str(survivor.tags)
    gone = Job.objects.create(namespace="ns", name="load", key_hash=job_key("ns", "load"))
    Job.objects.filter(pk=gone.pk).delete()  # purged since the form read it
    labels.label_holder(steward, gone, LabelKind.TAG, "pii")  # stored by name, no 500


@pytest.mark.django_db(transaction=True)
def test_two_splits_of_a_two_name_dataset_at_once_split_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Splitting either name of a two-name dataset leaves each alone: the first split holds
    its locks, the second waits for them and then finds its alias the only name of its
    dataset. It is refused as a split of an only name is, storing no rule and no log entry
    (checked before the locks, it stored both for a split that moved nothing)."""
    dataset = Dataset.objects.create(namespace="pg://db", name="orders")
    aliases = [
        DatasetAlias.objects.create(
            namespace="pg://db",
            name=name,
            key_hash=key_hash("pg://db", name),
            reason=AliasReason.EVENT,
            dataset=dataset,
        )
        for name in ("orders", "orders_v1")
    ]
    steward = get_user_model().objects.create_user("stew", is_staff=True)
    logged, commit = threading.Event(), threading.Event()
    log = curation.log_curation

    def log_then_wait(*args: Any, **kwargs: Any) -> Any:
        entry = log(*args, **kwargs)
        if not logged.is_set():  # the first split only
            logged.set()
            assert commit.wait(10)
        return entry

    monkeypatch.setattr(curation, "log_curation", log_then_wait)
    outcomes: dict[str, BaseException | None] = {}
    pids: list[int] = []

    def split(alias: DatasetAlias) -> None:
        try:
            connection.ensure_connection()
            pids.append(connection.connection.info.backend_pid)
            curation.split_alias(steward, alias)
            outcomes[alias.name] = None
        except BaseException as error:
            outcomes[alias.name] = error
        finally:
            connection.close()

    first = threading.Thread(target=split, args=(aliases[0],))
    second = threading.Thread(target=split, args=(aliases[1],))
    first.start()
    assert logged.wait(10)
    second.start()
    deadline = time.monotonic() + 10
    while not (len(pids) == 2 and _waiting_for_a_lock(pids[1])):
        assert time.monotonic() < deadline, "the second split never waited for the first"
        time.sleep(0.01)
    commit.set()
    first.join(10)
    second.join(10)
    assert outcomes["orders"] is None
    refused = outcomes["orders_v1"]
    assert isinstance(refused, ValueError), refused
    assert str(refused) == "this alias is already the only name of its dataset"
    assert list(AliasRule.objects.values_list("slug", flat=True)) == [
        f"steward-split-{aliases[0].pk}"
    ]
    assert LogEntry.objects.count() == 1
    homes = DatasetAlias.objects.values_list("dataset_id", flat=True)
    assert len(set(homes)) == 2  # each name alone in a dataset of its own

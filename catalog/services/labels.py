"""Tags and owners (ADR 0083): the producer's, from the ``tags`` and ``ownership`` facets,
and the steward's own (``StewardLabel``), projected together onto ``tags``/``owners`` of
datasets and jobs (runs: the producer's tags only).

Each entry says its ``source`` (``producer`` or ``steward``); a steward's ``hides`` row
marks the producer's entries of that key (and column) ``hidden``: kept, not shown, not
found. The projection is a pure function of the merged facets (newest version per facet,
so any order of events gives the same set) and the steward's rows, which are keyed by
name and kept across a rederive: derivation and the steward's edits both call it.
"""

import logging
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Q, Subquery

from catalog.facets import ownership, tags
from catalog.models import (
    Dataset,
    DatasetAlias,
    Job,
    LabelKind,
    LabelTarget,
    StewardLabel,
    TagDescription,
)
from catalog.models.steward import TAG_DESCRIPTION_LENGTH, TAG_NAME_LENGTH
from catalog.names import naming
from catalog.services.audit import log_curation
from catalog.services.derivation.locks import locked

logger = logging.getLogger(__name__)

PRODUCER, STEWARD = "producer", "steward"
# What projecting reads of a steward row.
LABEL_FIELDS = ("kind", "field", "key", "value", "hides")
# The longest field name a steward's label can name (its column's bound).
FIELD_LENGTH = StewardLabel._meta.get_field("field").max_length or 0


def projected_tags(facets: Any, labels: Iterable[StewardLabel]) -> list[dict[str, Any]]:
    """The producer's tags of ``facets`` and the steward's, hidden ones marked."""
    steward = [label for label in labels if label.kind == LabelKind.TAG]
    hidden = {(label.field, label.key) for label in steward if label.hides}
    answer = [
        {**tag, "source": PRODUCER, "hidden": (tag["field"], tag["key"]) in hidden}
        for tag in tags.producer_tags(facets)
    ]
    # One entry per tag, though a dataset's aliases may each carry it (merged identities).
    added = {(label.field, label.key, label.value) for label in steward if not label.hides}
    for field, key, value in sorted(added):
        answer.append({**tags.entry(key, value, field), "source": STEWARD, "hidden": False})
    return answer


def projected_owners(facets: Any, labels: Iterable[StewardLabel]) -> list[dict[str, Any]]:
    """The producer's owners of ``facets`` and the steward's, hidden ones marked."""
    steward = [label for label in labels if label.kind == LabelKind.OWNER]
    hidden = {label.key for label in steward if label.hides}
    answer = [
        {**owner, "source": PRODUCER, "hidden": owner["name"] in hidden}
        for owner in ownership.owners(facets)
    ]
    added = {(label.key, label.value) for label in steward if not label.hides}
    for name, kind in sorted(added):
        answer.append({**ownership.entry(name, kind), "source": STEWARD, "hidden": False})
    return answer


def project(holder: Dataset | Job, labels: Iterable[StewardLabel]) -> bool:
    """Set the holder's ``tags`` and ``owners``; True when either changed."""
    labels = list(labels)
    new_tags = projected_tags(holder.facets, labels)
    new_owners = projected_owners(holder.facets, labels)
    changed = (new_tags, new_owners) != (holder.tags, holder.owners)
    holder.tags, holder.owners = new_tags, new_owners
    return changed


def dataset_labels(
    dataset_ids: Iterable[int], known: dict[bytes, int] | None = None
) -> dict[int, list[StewardLabel]]:
    """The steward's rows for each of ``dataset_ids``, through its aliases (one query).

    ``known``: alias key hash → dataset id as derivation holds them in memory (an alias of
    the batch may not point at its dataset in the table yet); the others are read."""
    ids, known = list(dataset_ids), known or {}
    if not ids and not known:
        return {}
    holder = DatasetAlias.objects.filter(key_hash=OuterRef("key_hash")).values("dataset_id")
    stored = DatasetAlias.objects.filter(dataset_id__in=ids).values("key_hash")
    rows = (
        StewardLabel.objects.filter(target=LabelTarget.DATASET)
        .filter(Q(key_hash__in=list(known)) | Q(key_hash__in=stored))
        .annotate(dataset_id=Subquery(holder[:1]))
    )
    found: dict[int, list[StewardLabel]] = {}
    for row in rows:
        dataset_id = known.get(bytes(row.key_hash), row.dataset_id)
        if dataset_id is not None:  # an alias no dataset holds any more
            found.setdefault(dataset_id, []).append(row)
    return found


def job_labels(jobs: Iterable[Job]) -> dict[int, list[StewardLabel]]:
    """The steward's rows for each of ``jobs``, by job id (one query), read once the jobs
    are locked, in a statement of its own. Read in the statement that takes the lock, they
    were as that statement first saw them: a label committed by the edit whose lock it
    waited for was missing (PostgreSQL reads the locked row again, not the rest), and the
    batch wrote the job's tags without it."""
    by_key = {bytes(job.key_hash): job.pk for job in jobs}
    if not by_key:
        return {}
    rows = StewardLabel.objects.filter(target=LabelTarget.JOB, key_hash__in=list(by_key))
    found: dict[int, list[StewardLabel]] = {}
    for row in rows.only("key_hash", *LABEL_FIELDS):
        found.setdefault(by_key[bytes(row.key_hash)], []).append(row)
    return found


# --- the steward's edits ---------------------------------------------------------------


def label_holder(
    user: Any,
    holder: Dataset | Job,
    kind: str,
    key: str,
    value: str = "",
    field: str = "",
    hides: bool = False,
) -> StewardLabel:
    """Give ``holder`` a steward's tag or owner, or (``hides``) hide the producer's of that
    key; stored by the holder's display name, projected at once, logged."""
    with transaction.atomic():
        label, _ = StewardLabel.objects.get_or_create(
            key_hash=_holder_key(holder),
            target=_target(holder),
            kind=kind,
            field="" if kind == LabelKind.OWNER else field.strip(),
            key=key.strip(),
            value=value.strip(),
            defaults={
                "namespace": holder.namespace,
                "name": holder.name,
                "hides": hides,
                "created_by": user if getattr(user, "pk", None) else None,
            },
        )
        if label.hides != hides:
            label.hides = hides
            label.save(update_fields=["hides"])
        reproject(holder)
        _audit(user, holder, f"{'hid' if hides else 'added'} {label}")
    return label


def unlabel(user: Any, label: StewardLabel) -> None:
    """Delete a steward's row (a tag or owner of theirs, or a hiding) and re-project."""
    with transaction.atomic():
        holders = _holders(label)
        label.delete()
        for holder in holders:
            reproject(holder)
            _audit(user, holder, f"removed {label}")


def tag_name_problem(name: str, field: str = "") -> str | None:
    """Why a tag (``key`` or ``key:value``, as Marquez names a tag) of a holder or of its
    ``field`` cannot be stored, or None: the label columns' bounds (a name past them was a
    database error, a 500, on Marquez's tag calls), no empty key, no NUL."""
    key, _, value = name.partition(":")
    if not key.strip() or len(name) > TAG_NAME_LENGTH or max(len(key), len(value)) > 200:
        return f"A tag name is key or key:value, each 1-200 characters (got {len(name)})."
    if len(field) > FIELD_LENGTH:
        return f"A field of more than {FIELD_LENGTH} characters cannot be tagged."
    if "\x00" in name or "\x00" in field:
        return "A tag's name must not contain NUL characters."
    return None


def tag_description_problem(name: str, description: Any) -> str | None:
    """Why a tag's name or description cannot be stored, or None: a name as Marquez names a
    tag (``key`` or ``key:value``) within the label columns' bounds, a description text
    (or None: kept as it is) within its own; neither holds NUL (PostgreSQL text cannot)."""
    if (problem := tag_name_problem(name)) is not None:
        return problem
    if description is not None and not isinstance(description, str):
        return "description must be a string or null."
    if description is not None and len(description) > TAG_DESCRIPTION_LENGTH:
        return f"description is at most {TAG_DESCRIPTION_LENGTH} characters."
    if "\x00" in name or "\x00" in (description or ""):
        return "A tag's name and description must not contain NUL characters."
    return None


def describe_tag(user: Any, name: str, description: str | None) -> TagDescription:
    """Store a steward's description of the tag ``name`` (Marquez's ``PUT /tags/{tag}``,
    the admin): an upsert on the name, so two callers at once leave one row, the later
    description. ``None`` (Marquez's PUT without one) creates the tag's row, keeping a
    description it has. The caller checked ``tag_description_problem``."""
    row = TagDescription(
        name=name,
        description=description or "",
        created_by=user if getattr(user, "pk", None) else None,
    )
    with transaction.atomic():
        if description is None:
            TagDescription.objects.bulk_create([row], ignore_conflicts=True)
        else:
            TagDescription.objects.bulk_create(
                [row],
                update_conflicts=True,
                unique_fields=["name"],
                update_fields=["description", "updated_at"],
            )
        stored = TagDescription.objects.get(name=name)
        _audit(user, stored, f"described tag {name}: {stored.description!r}")
    return stored


def forget_tag_description(user: Any, row: TagDescription) -> None:
    """Delete a tag's description (the tag itself is the labels', untouched)."""
    with transaction.atomic():
        _audit(user, row, f"removed the description of tag {row.name}")
        row.delete()


def _audit(user: Any, holder: Dataset | Job | TagDescription, message: str) -> None:
    """A session's edit in the admin log (it needs a user); a token's in the log lines,
    by the token's name (a Marquez tag call, api/marquez/curation.py)."""
    if getattr(user, "pk", None) is not None:
        log_curation(user, holder, message)
    else:
        # Not "by=token:<name>": the log redaction reads that as a secret (ADR 0074).
        name = getattr(user, "name", str(user))
        model = holder._meta.model_name
        logger.info("curation actor=%s (api token) %s %s: %s", name, model, holder.pk, message)


def _target(holder: Dataset | Job) -> str:
    return LabelTarget.DATASET if isinstance(holder, Dataset) else LabelTarget.JOB


def _holder_key(holder: Dataset | Job) -> bytes:
    # A dataset by its display name's alias key; a job by its own key.
    if isinstance(holder, Job):
        return bytes(holder.key_hash)
    return naming.key_hash(holder.namespace, holder.name)


def tag(user: Any, holder: Dataset | Job, name: str, field: str = "") -> None:
    """Marquez's tag call: the steward tags ``holder`` (or its ``field``) with ``name``
    (``key`` or ``key:value``, as Marquez names a tag); a hidden producer tag of that key
    is shown again."""
    key, _, value = name.partition(":")
    with transaction.atomic():
        _unhide(user, holder, key, field)
        label_holder(user, holder, LabelKind.TAG, key, value, field)


def untag(user: Any, holder: Dataset | Job, name: str, field: str = "") -> None:
    """Marquez's untag call: the steward's own tag of that name goes; a producer's tag of
    that key is hidden (kept, not shown: derivation would bring it back otherwise)."""
    key, _, value = name.partition(":")
    with transaction.atomic():
        own = StewardLabel.objects.filter(
            key_hash=_holder_key(holder),
            target=_target(holder),
            kind=LabelKind.TAG,
            field=field,
            key=key,
            value=value,
            hides=False,
        )
        for label in own:
            unlabel(user, label)
        shown = [
            entry
            for entry in holder.tags
            if entry.get("source") == PRODUCER
            and not entry.get("hidden")
            and (entry.get("field") or "", entry.get("key")) == (field, key)
        ]
        if shown:
            label_holder(user, holder, LabelKind.TAG, key, "", field, hides=True)


def _unhide(user: Any, holder: Dataset | Job, key: str, field: str) -> None:
    hiding = StewardLabel.objects.filter(
        key_hash=_holder_key(holder),
        target=_target(holder),
        kind=LabelKind.TAG,
        field=field,
        key=key,
        hides=True,
    )
    for label in hiding:
        unlabel(user, label)


def _holders(label: StewardLabel) -> list[Dataset | Job]:
    if label.target == LabelTarget.JOB:
        return list(Job.objects.filter(key_hash=label.key_hash))
    return list(Dataset.objects.filter(aliases__key_hash=label.key_hash))


def reproject(holder: Dataset | Job) -> None:
    """Project the holder's tags and owners again, its row locked (derivation's order).

    A dataset merged away since the caller read it (the steward's page) is projected on the
    dataset that holds its name now: its labels are stored by that name. A holder gone
    altogether (purged) has nothing to project; its labels wait for the name's return.
    Unpacking one row was a 500 on the steward's page."""
    row: Dataset | Job
    if isinstance(holder, Dataset):
        named = Dataset.objects.for_alias(holder.namespace, holder.name).values("pk")
        rows = list(locked(Dataset.objects.filter(pk=holder.pk)))
        rows = rows or list(locked(Dataset.objects.filter(pk__in=named)))
        if not rows:
            return
        row = rows[0]
        labels = dataset_labels([row.pk]).get(row.pk, [])
    else:
        jobs = list(locked(Job.objects.filter(pk=holder.pk)))
        if not jobs:
            return
        row, labels = jobs[0], job_labels(jobs).get(jobs[0].pk, [])
    if project(row, labels):
        row.save(update_fields=["tags", "owners", "updated_at"])
    holder.tags, holder.owners = row.tags, row.owners

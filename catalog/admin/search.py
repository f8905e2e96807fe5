"""The admin's search: jobs, datasets (by any alias) and runs by any part of their name.

Ranked best first, case-insensitive and typo-tolerant like the read API's search
(catalog/reads/search.py, docs/adr/0032), and bounded at any catalog size (docs/adr/0047): each
branch is one index-backed query with a LIMIT, so the admin never scans a table.

- exact: ``namespace/name`` of any alias (the unique key-hash index) or ``#id``: first;
- substring (3+ characters): ``name ILIKE '%term%'`` on the trigram GIN indexes of alias and
  job names (migration 0003); the whole name, its last segment, a prefix rank above a
  substring in the middle;
- typo: pg_trgm word similarity (``<%``, the same indexes and threshold as the API);
- exact namespace (hash index), last: "every dataset of this namespace".
Runs are found by their runId (exact, or a UUID prefix: a range on the unique index) and as
the latest runs of the best matching jobs.
"""

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from django.contrib.postgres.fields import ArrayField
from django.db import connection, models, transaction
from django.db.models import F, Func, QuerySet, Value
from django.db.models.expressions import OrderBy
from django.http import HttpRequest

from catalog.admin.support import name_keys
from catalog.models import Dataset, Job
from catalog.names import naming
from catalog.reads.search import (
    CANDIDATES_PER_BRANCH,
    MAX_QUERY_LENGTH,
    WORD_SIMILARITY_THRESHOLD,
)
from core.admin_base import search_id

Kind = Literal["dataset", "job", "run"]

SEARCH_HELP = (
    "Any part of a name (3+ characters; typos forgiven; best match first), "
    "an exact namespace/name, a namespace, or #id."
)

# The ranked ids a changelist shows (50 a page, so 10 pages). What one branch reads, how
# long a term may be and how alike a typo must be are the API search's (one engine's caps).
RESULT_LIMIT = 500
JOBS_FOR_RUNS = 20
RUNS_PER_JOB = 25
MAX_TERM = MAX_QUERY_LENGTH
MIN_SUBSTRING = 3

# Scores: exact > whole name > last segment > prefix > substring > typo (0.45 to 1) > namespace.
EXACT, WHOLE, SEGMENT, PREFIX, SUBSTRING, NAMESPACE = 10.0, 5.0, 4.0, 3.0, 2.0, 0.1

# {table} has the name column "name"; {key} filters rows that can be shown.
_SUBSTRING_BRANCH = """
  (SELECT {id} AS id, CASE
      WHEN lower(t.name) = %(lq)s THEN {whole}
      WHEN right(lower(t.name), %(lqlen)s + 1) IN ('.' || %(lq)s, '/' || %(lq)s) THEN {segment}
      WHEN lower(t.name) LIKE %(prefix)s
        OR strpos(lower(t.name), '.' || %(lq)s) > 0 OR strpos(lower(t.name), '/' || %(lq)s) > 0
        THEN {prefix_score}
      ELSE {substring} END + similarity(%(q)s, t.name) / 10 AS score
   FROM {table} t WHERE t.name ILIKE %(like)s {key} LIMIT %(cap)s)
  UNION ALL
"""
_TYPO_BRANCH = """
  (SELECT {id}, word_similarity(%(q)s, t.name) + similarity(%(q)s, t.name) / 10
   FROM {table} t WHERE %(q)s <%% t.name {key} LIMIT %(cap)s)
"""


@dataclass(frozen=True)
class Hit:
    kind: Kind
    id: int
    namespace: str
    name: str
    score: float


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _term(term: str) -> str:
    return term.strip()[:MAX_TERM]


def _without_search(term: str) -> list[int] | None:
    """The answer that needs no search: nothing for a blank term, the row itself for "#id"."""
    if not term:
        return []
    if (pk := search_id(term)) is not None:
        return [pk]
    return None


def _ranked(sql: str, values: dict[str, Any]) -> list[int]:
    """Run a UNION of scored (id, score) branches; the best score per id, best first."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('pg_trgm.word_similarity_threshold', %s, true)",
            [str(WORD_SIMILARITY_THRESHOLD)],
        )
        cursor.execute(
            f"SELECT id FROM ({sql}) AS hits GROUP BY id "
            "ORDER BY max(score) DESC, id LIMIT %(limit)s",
            {**values, "limit": RESULT_LIMIT},
        )
        return [row[0] for row in cursor.fetchall()]


def _values(term: str) -> dict[str, Any]:
    lowered = term.lower()
    return {
        "q": term,
        "lq": lowered,
        "lqlen": len(term),
        "prefix": _like_escape(lowered) + "%",
        "like": f"%{_like_escape(term)}%",
        "cap": CANDIDATES_PER_BRANCH,
        "keys": name_keys(term),
    }


def _name_branches(table: str, id_column: str, key: str, term: str) -> str:
    # A shorter term has no trigram to look the substring up by (it would read the whole
    # index): the typo and exact branches still answer ("t1" is a word of "public.t1").
    template = _TYPO_BRANCH
    if len(term) >= MIN_SUBSTRING:
        template = _SUBSTRING_BRANCH + template
    return template.format(
        id=id_column,
        table=table,
        key=key,
        whole=WHOLE,
        segment=SEGMENT,
        prefix_score=PREFIX,
        substring=SUBSTRING,
    )


def _name_search(
    term: str, *, exact: str, table: str, id_column: str, key: str, in_namespace: str
) -> list[int]:
    """Ids of a named table, best first: ``exact`` (the key hash), the name branches over
    ``table``, then ``in_namespace`` (the term is a namespace)."""
    sql = (
        f"({exact}) UNION ALL"
        + _name_branches(table, id_column, key, term)
        + f" UNION ALL ({in_namespace})"
    )
    return _ranked(sql, _values(term))


def dataset_ids(term: str) -> list[int]:
    """Datasets whose any alias matches ``term``, best first (at most RESULT_LIMIT)."""
    term = _term(term)
    if (answer := _without_search(term)) is not None:
        return answer
    return _name_search(
        term,
        exact=f"SELECT a.dataset_id AS id, {EXACT} AS score FROM catalog_dataset_alias a "
        "WHERE a.key_hash = ANY(%(keys)s) AND a.dataset_id IS NOT NULL LIMIT %(cap)s",
        table="catalog_dataset_alias",
        id_column="t.dataset_id",
        key="AND t.dataset_id IS NOT NULL",
        in_namespace=f"SELECT d.id, {NAMESPACE} FROM catalog_dataset d "
        "WHERE d.namespace = %(q)s LIMIT %(cap)s",
    )


def job_ids(term: str) -> list[int]:
    """Jobs matching ``term``, best first (at most RESULT_LIMIT)."""
    term = _term(term)
    if (answer := _without_search(term)) is not None:
        return answer
    return _name_search(
        term,
        exact=f"SELECT j.id, {EXACT} AS score FROM catalog_job j "
        "WHERE j.key_hash = ANY(%(keys)s) LIMIT %(cap)s",
        table="catalog_job",
        id_column="t.id",
        key="",
        in_namespace=f"SELECT j.id, {NAMESPACE} FROM catalog_job j "
        "WHERE j.namespace = %(q)s LIMIT %(cap)s",
    )


def _uuid_range(term: str) -> tuple[uuid.UUID, uuid.UUID] | None:
    """A hex prefix of a UUID (dashes optional, 4+ digits) as the range it stands for."""
    digits = term.lower().replace("-", "")
    if not 4 <= len(digits) <= 32 or not re.fullmatch(r"[0-9a-f]+", digits):
        return None
    return uuid.UUID(digits.ljust(32, "0")), uuid.UUID(digits.ljust(32, "f"))


def run_ids(term: str) -> list[int]:
    """Runs by runId (exact or UUID prefix), then the latest runs of the best matching jobs."""
    term = _term(term)
    if (answer := _without_search(term)) is not None:
        return answer
    values: dict[str, Any] = {"cap": CANDIDATES_PER_BRANCH, "per_job": RUNS_PER_JOB}
    branches = []
    try:
        values["exact"] = naming.run_uuid(term, "", "")
        branches.append(
            f"(SELECT r.id, {EXACT} AS score FROM catalog_run r WHERE r.run_uuid = %(exact)s)"
        )
    except ValueError:
        pass
    if (bounds := _uuid_range(term)) is not None:
        values["low"], values["high"] = bounds
        branches.append(
            f"(SELECT r.id, {WHOLE} FROM catalog_run r WHERE r.run_uuid BETWEEN %(low)s AND "
            "%(high)s ORDER BY r.run_uuid LIMIT %(cap)s)"
        )
    jobs = job_ids(term)[:JOBS_FOR_RUNS]
    if jobs:
        # Runs of the i-th job score below those of the (i-1)-th; newest first within a job.
        values["jobs"] = jobs
        branches.append(
            "(SELECT r.id, 1.0 - j.position / 100.0 FROM unnest(%(jobs)s::bigint[]) "
            "WITH ORDINALITY AS j(id, position) CROSS JOIN LATERAL (SELECT r.id FROM catalog_run r "
            "WHERE r.job_id = j.id ORDER BY r.started_at DESC NULLS LAST, r.id DESC "
            "LIMIT %(per_job)s) r)"
        )
    if not branches:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM ({' UNION ALL '.join(branches)}) AS hits GROUP BY id "
            "ORDER BY max(score) DESC, id DESC LIMIT %(limit)s",
            {**values, "limit": RESULT_LIMIT},
        )
        return [row[0] for row in cursor.fetchall()]


IDS = {"dataset": dataset_ids, "job": job_ids, "run": run_ids}


def rank_order(ids: list[int]) -> OrderBy:
    """Order rows as in ``ids`` (best match first): ``array_position(ids, id)``."""
    position = Func(
        Value(ids, output_field=ArrayField(models.BigIntegerField())),
        F("id"),
        function="array_position",
        output_field=models.IntegerField(),
    )
    return position.asc()


def search(term: str, kinds: Iterable[Kind] = ("dataset", "job"), limit: int = 20) -> list[Hit]:
    """The best ``limit`` datasets and jobs for the explorer, interleaved by rank."""
    hits: list[Hit] = []
    for kind in kinds:
        ids = IDS[kind](term)[:limit]
        model = Dataset if kind == "dataset" else Job
        # What is retired is no hit (ADR 0078): its picture is drawn for no one (no node).
        found = model.objects.current().filter(id__in=ids).only("namespace", "name")
        rows = {row.id: row for row in found}
        hits += [
            Hit(kind, pk, rows[pk].namespace, rows[pk].name, -rank)  # type: ignore[arg-type]
            for rank, pk in enumerate(ids)
            if pk in rows
        ]
    # Same rank: datasets before jobs (kinds' order); the explorer shows both lists anyway.
    return sorted(hits, key=lambda hit: -hit.score)[:limit]


class RankedSearchMixin:
    """For a ModelAdmin: the changelist's search box ranks by this module, best first.

    The ranked ids are computed once per request (the admin asks for the ordering twice)."""

    search_kind: Kind = "dataset"

    def ranked_ids(self, request: HttpRequest, term: str) -> list[int]:
        memo = request.__dict__.setdefault("_admin_search_ids", {})
        key = (self.search_kind, term.strip())
        if key not in memo:
            memo[key] = IDS[self.search_kind](term)
        return memo[key]

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, term: str) -> Any:
        if not term.strip():
            return queryset, False
        return queryset.filter(id__in=self.ranked_ids(request, term)), False

    def get_ordering(self, request: HttpRequest) -> Any:
        term = request.GET.get("q", "")
        if term.strip():
            return (rank_order(self.ranked_ids(request, term)),)
        return super().get_ordering(request)  # type: ignore[misc]

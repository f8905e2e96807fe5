"""Catalog search: PostgreSQL full-text plus trigram similarity, ranked (docs/adr/0032).

What is searched, and with which index (migration 0003_read_api_search_indexes):
- every dataset alias name (trigram, so a typo still finds the table) and its namespace and
  name words (full-text);
- job names (trigram) and job namespace, name and description words (full-text);
- dataset descriptions (full-text, English stemming);
- column names of current schemas (trigram);
- tags (a visible tag's key, or key:value) and owners (a visible owner's name) of datasets
  and jobs, matched whole (jsonb containment, the GIN indexes of migration 0024; ADR 0083).
What is retired (ADR 0078) is not found.
A dataset only named inside another dataset's column lineage (no event reads, writes or
describes it) ranks ``PHANTOM_PENALTY`` lower than its match. Its two ``EXISTS`` are left
to the planner, hashed or probed per hit by cost: forced to probe (``OFFSET 0``), a store
whose column-lineage facts all name one source (statistics: one distinct value, so any probe
"matches every row") scanned the facts once per hit, 254 ms against 16 ms on the curve's 10M
store (ADR 0122, amended).
Each branch reads at most ``CANDIDATES_PER_BRANCH`` index hits, so a query that matches half
the catalog (a namespace) costs the same as one that matches ten rows; results are the best
hit per dataset or job, ranked by score.
A name's score is its word similarity to the query: ``similarity`` (the whole name's) can
never exceed it (the whole name is one of the extents ``word_similarity`` takes the best of,
over a smaller denominator), so taking the greater of the two computed a trigram set per row
for nothing (ADR 0111).
A job hit carries the namespace and name of the job row its branch matched; only dataset
hits are joined to their dataset for its name (an alias or column names a dataset by
another name). Joining every hit to the job table had PostgreSQL hash all the jobs (10,000
on bench/read.py's small store) to name a page of hits (ADR 0122).
``search_found`` (the Marquez mount's) is the same search filtered by namespace and by when a
hit was last seen inside each branch, so a branch's cap counts the matches that pass, then
ordered by name or last seen, counted and paged: the filters and the order apply to every
candidate, not to a page of the ranked ones (ADR 0175).
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.db import connection

from catalog.models import RetiredKind, retired_sql

CANDIDATES_PER_BRANCH = 500
# Trigram word similarity needed by the typo branch (pg_trgm's default is 0.6).
WORD_SIMILARITY_THRESHOLD = 0.45
MAX_QUERY_LENGTH = 200
# cpu_operator_cost for the search's statement (PostgreSQL's default is 0.0025): 100 times,
# near what one trigram similarity costs against one integer comparison (ADR 0111).
TRIGRAM_OPERATOR_COST = 0.25
# A dataset that is a source in some run's column lineage and that no event names as an
# input, output, DatasetEvent subject or symlink exists only as a name inside that column
# lineage: producers' SQL parsers make such names
# from CTE and subquery aliases (``paid`` for ``WITH paid AS (...)``). It ranks this much
# lower (the exact-name bonus), below a real table of the same name (issue 26).
PHANTOM_PENALTY = 0.5
NAMED_ROLES = "('input', 'output', 'dataset', 'symlink')"

# The indexed expressions; the migration creates expression indexes on exactly these.
ALIAS_WORDS = (
    "to_tsvector('simple', regexp_replace(a.namespace || ' ' || a.name, '[^[:alnum:]]+', ' ', 'g'))"
)
JOB_WORDS = "(to_tsvector('simple', regexp_replace(j.namespace || ' ' || j.name, '[^[:alnum:]]+', ' ', 'g')) || to_tsvector('simple', j.description))"  # noqa: E501
DATASET_DESCRIPTION = "to_tsvector('english', d.description)"

# Sent with the search in one round trip (one simple-protocol query: Django's psycopg cursor
# binds parameters client-side), so PostgreSQL runs them as one implicit transaction
# and the SETs end with it; inside a caller's transaction they end with that (ADR 0111).
# - The threshold the index applies to ``<%`` (a GIN scan reads it, so it must be a setting).
# - No JIT: every branch reads at most CANDIDATES_PER_BRANCH rows, but the estimate grows
#   with tables the statement barely reads (the phantom penalty's), and past
#   jit_above_cost compiling the plan took 250 ms for a 20-60 ms statement (ADR 0111).
# - An operator costed as what a trigram comparison costs: pg_trgm declares its functions
#   at the cost of an integer comparison (1), so the planner took a scan of every job name,
#   computing each one's similarity, for the cheap way to 500 matches (ADR 0111).
_SETTINGS = (
    f"SET LOCAL pg_trgm.word_similarity_threshold = {float(WORD_SIMILARITY_THRESHOLD)}; "
    "SET LOCAL jit = off; "
    f"SET LOCAL cpu_operator_cost = {TRIGRAM_OPERATOR_COST}; "
)

_HITS = f"""
WITH hits AS (
  (SELECT 'dataset' AS type, a.dataset_id AS id, 'alias' AS field,
          a.namespace || ' ' || a.name AS value, NULL AS namespace, NULL AS name,
          word_similarity(%(q)s, a.name)
          + CASE WHEN lower(a.name) = %(lq)s OR right(lower(a.name), %(lqlen)s + 1)
                 IN ('.' || %(lq)s, '/' || %(lq)s) THEN 0.5 ELSE 0 END AS score
   FROM catalog_dataset_alias a
   WHERE %(q)s <%% a.name AND a.dataset_id IS NOT NULL{{of_alias}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', a.dataset_id, 'alias', a.namespace || ' ' || a.name, NULL, NULL,
          0.5 + ts_rank({ALIAS_WORDS}, to_tsquery('simple', %(words)s))
   FROM catalog_dataset_alias a
   WHERE {ALIAS_WORDS} @@ to_tsquery('simple', %(words)s) AND a.dataset_id IS NOT NULL{{of_alias}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'name', j.namespace || ' ' || j.name, j.namespace, j.name,
          word_similarity(%(q)s, j.name)
          + CASE WHEN lower(j.name) = %(lq)s OR right(lower(j.name), %(lqlen)s + 1)
                 IN ('.' || %(lq)s, '/' || %(lq)s) THEN 0.5 ELSE 0 END
   FROM catalog_job j
   WHERE %(q)s <%% j.name{{of_job}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'words', j.namespace || ' ' || j.name, j.namespace, j.name,
          0.45 + ts_rank({JOB_WORDS}, to_tsquery('simple', %(words)s))
   FROM catalog_job j
   WHERE {JOB_WORDS} @@ to_tsquery('simple', %(words)s){{of_job}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'description', left(d.description, 200), NULL, NULL,
          0.4 + ts_rank({DATASET_DESCRIPTION}, websearch_to_tsquery('english', %(q)s))
   FROM catalog_dataset d
   WHERE {DATASET_DESCRIPTION} @@ websearch_to_tsquery('english', %(q)s){{of_dataset}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'tag', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE (d.tags @> %(tag)s::jsonb OR d.tags @> %(tag_value)s::jsonb){{of_dataset}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'owner', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE d.owners @> %(owner)s::jsonb{{of_dataset}} LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'tag', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE (j.tags @> %(tag)s::jsonb OR j.tags @> %(tag_value)s::jsonb){{of_job}}
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'owner', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE j.owners @> %(owner)s::jsonb{{of_job}} LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', f.dataset_id, 'column', f.name, NULL, NULL,
          0.8 * word_similarity(%(q)s, f.name)
   FROM catalog_dataset_field f
   WHERE %(q)s <%% f.name{{of_field}}
   LIMIT %(cap)s)
),
best AS (
  SELECT DISTINCT ON (type, id) type, id, field, value, namespace, name, score
  FROM hits ORDER BY type, id, score DESC, field
),
ranked AS MATERIALIZED (
  SELECT b.type, b.id, b.field, b.value, b.namespace, b.name,
         b.score - CASE WHEN b.type = 'dataset' AND EXISTS (
             SELECT 1 FROM catalog_dataset_alias ca
             JOIN catalog_column_lineage_fact cf ON cf.source_alias_id = ca.id
             WHERE ca.dataset_id = b.id
         ) AND NOT EXISTS (
             SELECT 1 FROM catalog_dataset_alias na
             JOIN catalog_event_dataset ne ON ne.alias_id = na.id
             WHERE na.dataset_id = b.id AND ne.role IN {NAMED_ROLES}
         ) THEN {PHANTOM_PENALTY} ELSE 0 END AS score
  FROM best b
)
"""

# The ranked page of search_catalog (the REST search's).
_PAGE = f"""SELECT b.type, b.id, b.field, b.value, round(b.score::numeric, 4)::float8,
       COALESCE(d.namespace, b.namespace), COALESCE(d.name, b.name)
FROM ranked b
LEFT JOIN catalog_dataset d ON b.type = 'dataset' AND d.id = b.id
WHERE (b.type = 'job' OR d.id IS NOT NULL) {{type_filter}}
  AND NOT {retired_sql(RetiredKind.DATASET, "d.id")}
  AND NOT (b.type = 'job' AND {retired_sql(RetiredKind.JOB, "b.id")})
ORDER BY b.score DESC, b.type, b.id
LIMIT %(limit)s OFFSET %(offset)s
"""

# search_found's: every candidate that passed, counted, ordered, then the page of them (one
# row with the count and no hit when the page is empty). A job's last-seen time is read by
# its id, as its row is not joined (ADR 0122: PostgreSQL hashed every job to name a page).
_FOUND = f"""
, found AS MATERIALIZED (
  SELECT b.type, b.id, b.score, COALESCE(d.namespace, b.namespace) AS namespace,
         COALESCE(d.name, b.name) AS name,
         CASE WHEN b.type = 'dataset' THEN d.last_seen
              ELSE (SELECT j.last_seen FROM catalog_job j WHERE j.id = b.id) END AS last_seen
  FROM ranked b
  LEFT JOIN catalog_dataset d ON b.type = 'dataset' AND d.id = b.id
  WHERE (b.type = 'job' OR d.id IS NOT NULL) {{type_filter}}
    AND NOT {retired_sql(RetiredKind.DATASET, "d.id")}
    AND NOT (b.type = 'job' AND {retired_sql(RetiredKind.JOB, "b.id")})
)
SELECT c.total, p.type, p.id, p.namespace, p.name, p.last_seen
FROM (SELECT count(*) AS total FROM found) c
LEFT JOIN LATERAL (
  SELECT * FROM found ORDER BY {{order}} LIMIT %(limit)s OFFSET %(offset)s
) p ON true
ORDER BY {{outer_order}}
"""


@dataclass(frozen=True)
class SearchHit:
    type: str
    id: int
    namespace: str
    name: str
    matched_field: str
    matched_value: str
    score: float


def _words(query: str) -> str:
    """Every word of the query must match, the last one as a prefix (type-ahead)."""
    words = [word for word in re.split(r"[^\w]+", query.lower()) if word]
    if not words:
        return ""
    terms = [f"'{word}'" for word in words[:-1]] + [f"'{words[-1]}':*"]
    return " & ".join(terms)


def _label_patterns(text: str) -> dict[str, str]:
    """The jsonb a visible tag (key, or key:value) or owner matching ``text`` contains."""
    key, _, value = text.partition(":")
    return {
        "tag": json.dumps([{"key": text, "hidden": False}]),
        "tag_value": json.dumps([{"key": key, "value": value, "hidden": False}]),
        "owner": json.dumps([{"name": text, "hidden": False}]),
    }


def _parameters(text: str, limit: int, offset: int, kind: str | None) -> dict[str, Any]:
    return {
        "q": text,
        "lq": text.lower(),
        "lqlen": len(text),
        "words": _words(text),  # "" is an empty tsquery: it matches nothing
        "cap": CANDIDATES_PER_BRANCH,
        "limit": limit,
        "offset": offset,
        "kind": kind,
        **_label_patterns(text),
    }


def _rows(statement: str, parameters: dict[str, Any]) -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(_SETTINGS + statement, parameters)
        while cursor.nextset():  # past the SETs' empty results, to the SELECT's rows
            pass
        return cursor.fetchall()


_NO_OWNER_FILTER = {"of_alias": "", "of_job": "", "of_dataset": "", "of_field": ""}


def search_catalog(
    query: str, limit: int, offset: int = 0, kind: str | None = None
) -> list[SearchHit]:
    """Ranked datasets and jobs for ``query``; ``kind`` restricts to "dataset" or "job"."""
    text = query.strip()[:MAX_QUERY_LENGTH]
    type_filter = "AND b.type = %(kind)s" if kind else ""
    rows = _rows(
        (_HITS + _PAGE).format(type_filter=type_filter, **_NO_OWNER_FILTER),
        _parameters(text, limit, offset, kind),
    )
    return [
        SearchHit(
            type=row[0],
            id=row[1],
            matched_field=row[2],
            matched_value=row[3],
            score=row[4],
            namespace=row[5],
            name=row[6],
        )
        for row in rows
    ]


@dataclass(frozen=True)
class FoundHit:
    type: str
    id: int
    namespace: str
    name: str
    last_seen: datetime | None


@dataclass(frozen=True)
class FoundPage:
    total: int  # every hit that passed the filters, not only the page's (ADR 0175)
    hits: list[FoundHit]


# search_found's orders: by name (code point order, as Python sorts text) or most recently
# seen first (never seen last); ties by rank.
_ORDERS = {
    "name": 'name COLLATE "C", namespace COLLATE "C", type, score DESC, id',
    "last_seen": "last_seen DESC NULLS LAST, score DESC, type, id",
}


def _owner_filter(row: str, namespace: str | None, after: bool, before: bool) -> str:
    """The conditions a dataset or job row (``row``) meets to be found, as SQL."""
    conditions = ""
    if namespace is not None:
        # md5 first, so the planner may take the namespace's index (DigestIndexedText).
        conditions += (
            f" AND md5({row}.namespace) = md5(%(namespace)s) AND {row}.namespace = %(namespace)s"
        )
    if after:
        conditions += f" AND {row}.last_seen > %(seen_after)s"
    if before:
        conditions += f" AND {row}.last_seen < %(seen_before)s"
    return conditions


def search_found(
    query: str,
    limit: int,
    offset: int = 0,
    kind: str | None = None,
    *,
    namespace: str | None = None,
    seen_after: datetime | None = None,
    seen_before: datetime | None = None,
    order: Literal["name", "last_seen"] = "name",
) -> FoundPage:
    """Datasets and jobs for ``query`` in ``namespace``, last seen after ``seen_after`` and
    before ``seen_before`` (both excluded), ``order``-ed, then paged; with the count of all.

    The filters apply inside each candidate branch, so its ``CANDIDATES_PER_BRANCH`` are
    the filtered matches, and the order and the count over all of them (ADR 0175): the
    answer is the search's candidates that pass, not a page of them filtered afterwards.
    """
    text = query.strip()[:MAX_QUERY_LENGTH]
    after, before = seen_after is not None, seen_before is not None
    dataset = _owner_filter("o", namespace, after, before)
    exists = f" AND EXISTS (SELECT 1 FROM catalog_dataset o WHERE o.id = {{}}{dataset})"
    filters = {
        "of_alias": exists.format("a.dataset_id") if dataset else "",
        "of_field": exists.format("f.dataset_id") if dataset else "",
        "of_dataset": _owner_filter("d", namespace, after, before),
        "of_job": _owner_filter("j", namespace, after, before),
    }
    sort = _ORDERS[order]
    statement = (_HITS + _FOUND).format(
        type_filter="AND b.type = %(kind)s" if kind else "",
        order=sort,
        outer_order=", ".join(f"p.{key.strip()}" for key in sort.split(",")),
        **filters,
    )
    parameters = _parameters(text, limit, offset, kind)
    parameters.update(namespace=namespace, seen_after=seen_after, seen_before=seen_before)
    rows = _rows(statement, parameters)
    return FoundPage(
        total=rows[0][0],
        hits=[FoundHit(*row[1:]) for row in rows if row[1] is not None],
    )

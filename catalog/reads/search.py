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
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from catalog.models import Dataset, Job, RetiredKind, retired_sql

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

_SEARCH = f"""
WITH hits AS (
  (SELECT 'dataset' AS type, a.dataset_id AS id, 'alias' AS field,
          a.namespace || ' ' || a.name AS value, NULL AS namespace, NULL AS name,
          word_similarity(%(q)s, a.name)
          + CASE WHEN lower(a.name) = %(lq)s OR right(lower(a.name), %(lqlen)s + 1)
                 IN ('.' || %(lq)s, '/' || %(lq)s) THEN 0.5 ELSE 0 END AS score
   FROM catalog_dataset_alias a
   WHERE %(q)s <%% a.name AND a.dataset_id IS NOT NULL
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', a.dataset_id, 'alias', a.namespace || ' ' || a.name, NULL, NULL,
          0.5 + ts_rank({ALIAS_WORDS}, to_tsquery('simple', %(words)s))
   FROM catalog_dataset_alias a
   WHERE {ALIAS_WORDS} @@ to_tsquery('simple', %(words)s) AND a.dataset_id IS NOT NULL
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'name', j.namespace || ' ' || j.name, j.namespace, j.name,
          word_similarity(%(q)s, j.name)
          + CASE WHEN lower(j.name) = %(lq)s OR right(lower(j.name), %(lqlen)s + 1)
                 IN ('.' || %(lq)s, '/' || %(lq)s) THEN 0.5 ELSE 0 END
   FROM catalog_job j
   WHERE %(q)s <%% j.name
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'words', j.namespace || ' ' || j.name, j.namespace, j.name,
          0.45 + ts_rank({JOB_WORDS}, to_tsquery('simple', %(words)s))
   FROM catalog_job j
   WHERE {JOB_WORDS} @@ to_tsquery('simple', %(words)s)
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'description', left(d.description, 200), NULL, NULL,
          0.4 + ts_rank({DATASET_DESCRIPTION}, websearch_to_tsquery('english', %(q)s))
   FROM catalog_dataset d
   WHERE {DATASET_DESCRIPTION} @@ websearch_to_tsquery('english', %(q)s)
   LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'tag', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE d.tags @> %(tag)s::jsonb OR d.tags @> %(tag_value)s::jsonb LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', d.id, 'owner', %(q)s, NULL, NULL, 0.9 FROM catalog_dataset d
   WHERE d.owners @> %(owner)s::jsonb LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'tag', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE j.tags @> %(tag)s::jsonb OR j.tags @> %(tag_value)s::jsonb LIMIT %(cap)s)
  UNION ALL
  (SELECT 'job', j.id, 'owner', %(q)s, j.namespace, j.name, 0.9 FROM catalog_job j
   WHERE j.owners @> %(owner)s::jsonb LIMIT %(cap)s)
  UNION ALL
  (SELECT 'dataset', f.dataset_id, 'column', f.name, NULL, NULL,
          0.8 * word_similarity(%(q)s, f.name)
   FROM catalog_dataset_field f
   WHERE %(q)s <%% f.name
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
SELECT b.type, b.id, b.field, b.value, round(b.score::numeric, 4)::float8,
       COALESCE(d.namespace, b.namespace), COALESCE(d.name, b.name)
FROM ranked b
LEFT JOIN catalog_dataset d ON b.type = 'dataset' AND d.id = b.id
WHERE (b.type = 'job' OR d.id IS NOT NULL) {{type_filter}}
  AND NOT {retired_sql(RetiredKind.DATASET, "d.id")}
  AND NOT (b.type = 'job' AND {retired_sql(RetiredKind.JOB, "b.id")})
ORDER BY b.score DESC, b.type, b.id
LIMIT %(limit)s OFFSET %(offset)s
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


def search_catalog(
    query: str, limit: int, offset: int = 0, kind: str | None = None
) -> list[SearchHit]:
    """Ranked datasets and jobs for ``query``; ``kind`` restricts to "dataset" or "job"."""
    text = query.strip()[:MAX_QUERY_LENGTH]
    words = _words(text)  # "" is an empty tsquery: it matches nothing
    type_filter = "AND b.type = %(kind)s" if kind else ""
    with connection.cursor() as cursor:
        cursor.execute(
            _SETTINGS + _SEARCH.format(type_filter=type_filter),
            {
                "q": text,
                "lq": text.lower(),
                "lqlen": len(text),
                "words": words,
                "cap": CANDIDATES_PER_BRANCH,
                "limit": limit,
                "offset": offset,
                "kind": kind,
                **_label_patterns(text),
            },
        )
        while cursor.nextset():  # past the SETs' empty results, to the SELECT's rows
            pass
        rows: list[Any] = cursor.fetchall()
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


def last_seen_of(hits: list[SearchHit]) -> dict[tuple[str, int], datetime | None]:
    """When each hit's dataset or job was last seen, by (type, id): two queries."""
    seen: dict[tuple[str, int], datetime | None] = {}
    for kind, model in (("dataset", Dataset), ("job", Job)):
        ids = [hit.id for hit in hits if hit.type == kind]
        for row_id, last_seen in model.objects.filter(id__any=ids).values_list("id", "last_seen"):
            seen[(kind, row_id)] = last_seen
    return seen

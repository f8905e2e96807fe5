"""Row counts are integers, whatever the planner estimates.

PostgreSQL's estimates (``pg_class.reltuples``, a plan's ``Plan Rows``) are floats: a table
whose statistics say 1e30 rows would be shown as ``1e+30``, or break a ``::bigint`` cast
with a database error. Every count the catalog shows is an integer between 0 and
``MAX_COUNT``, the largest a PostgreSQL bigint (and a JSON reader's int64) holds.
"""

MAX_COUNT = 2**63 - 1


def clamp_count(value: float | int) -> int:
    """``value`` as an integer in 0..MAX_COUNT (a NaN is 0)."""
    if value != value:  # NaN
        return 0
    if value >= MAX_COUNT:
        return MAX_COUNT
    return max(int(value), 0)


def estimate_sql(column: str) -> str:
    """SQL of ``column`` (a float estimate) as a bigint in 0..MAX_COUNT, never an error."""
    return f"LEAST(GREATEST({column}, 0)::numeric, {MAX_COUNT})::bigint"

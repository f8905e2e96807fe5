"""Large id lists as query parameters: one text literal, not psycopg's array dumper.

psycopg dumps a Python list element by element in Python: 10,000 ids cost ~15 ms per
parameter, and the impact report over 10,000 datasets passes half a dozen such lists.
Joined into PostgreSQL's array literal (``{1,2,3}``) they cost ~1 ms; the query casts the
parameter (``%(ids)s::bigint[]``), which it must, since the parameter is then text.
"""

from collections.abc import Iterable


def bigint_array(ids: Iterable[int]) -> str:
    """``ids`` as an array literal for a ``%(…)s::bigint[]`` parameter."""
    return "{" + ",".join(map(str, ids)) + "}"

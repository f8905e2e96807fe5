"""The ``any`` lookup: ``filter(id__any=ids)`` is ``"id" = ANY(%s)`` with one array parameter.

``id__in=ids`` writes one placeholder per value, and Django prepares and psycopg dumps
each one on every query: for the ~200 ids of a lineage graph's nodes that was a tenth of
the request's CPU (docs/adr/0054). One array parameter costs one dump, the SQL text is
the same for any length, and PostgreSQL plans ``= ANY(array)`` as it plans ``IN``.
Values are sent as given: pass what the column holds (ints for ids, also of a foreign key).
"""

from typing import Any

from django.db.models import Field, ForeignObject, Lookup


class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: Any) -> Any:
        return "%s", (list(value),)

    def as_sql(self, compiler: Any, connection: Any) -> Any:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", (*lhs_params, *rhs_params)


# Relations keep their own lookup registry (Django's ForeignObject.get_class_lookups).
Field.register_lookup(AnyOf)
ForeignObject.register_lookup(AnyOf)

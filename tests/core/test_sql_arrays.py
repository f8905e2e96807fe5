"""An id list passed as one array literal reaches PostgreSQL as the same bigint array."""

import pytest
from django.db import connection

from core.sql_arrays import bigint_array


@pytest.mark.django_db
@pytest.mark.parametrize(
    "ids", [[], [7], [3, 1, 2, 3], [-5, 0, 9_223_372_036_854_775_807], range(1, 10_001)]
)
def test_bigint_array_is_the_list(ids):
    with connection.cursor() as cursor:
        cursor.execute("SELECT %(ids)s::bigint[]", {"ids": bigint_array(ids)})
        assert cursor.fetchone()[0] == list(ids)

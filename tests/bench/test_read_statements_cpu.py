"""bench/read_statements_cpu.py groups a read's statements by their opening words with the
values left out, so that one statement sent with other ids is one group (ADR 0128)."""

from bench.read_statements_cpu import group_of


def test_the_same_statement_with_other_values_is_one_group():
    first = "(SELECT true, d FROM unnest('{1,2,3}'::bigint[]) AS d WHERE x = 7"
    second = "(SELECT true, d FROM unnest('{40,5}'::bigint[]) AS d WHERE x = 9"
    assert group_of(first) == group_of(second) == "(SELECT true, d FROM unnest(?::bigint[]) AS"


def test_statements_that_open_differently_are_apart():
    assert group_of("SELECT EXISTS (SELECT 1 FROM catalog_static_lineage)") != group_of(
        "SELECT EXISTS (SELECT 1 FROM catalog_retirement)"
    )
    assert group_of("WITH  RECURSIVE\n up(dataset_id, depth) AS (") == group_of(
        "WITH RECURSIVE up(dataset_id, depth) AS ("
    )


def test_a_quote_inside_a_value_is_part_of_it():
    assert group_of("SELECT 'it''s', 'x' FROM t") == "SELECT ?, ? FROM t"

"""The merge engines' SQL on hand-made rows, by the rules of Paimon's merge functions
(Java ``DeduplicateMergeFunction``, ``FirstRowMergeFunction``,
``PartialUpdateMergeFunction``, ``AggregateMergeFunction`` and its ``FieldAggregator``s:
``FieldSumAgg.retract`` subtracts, ``FieldLastValueAgg.retract`` gives null,
``FieldLastNonNullValueAgg.retract`` gives null for a non-null retracted value, others
cannot retract)."""

from __future__ import annotations

import re
from typing import Any

import duckdb
import pytest

from iceduck.engine.paimon_merge import merge_spec, merge_sql
from iceduck.errors import UnsupportedError
from iceduck.spec.paimon.schema import DataField, TableSchema
from iceduck.spec.paimon.types import PaimonType

BIGINT = PaimonType("BIGINT")
STRING = PaimonType("VARCHAR", length=2147483647)
FIELDS = (DataField(0, "id", BIGINT, None), DataField(1, "a", BIGINT), DataField(2, "s", STRING))

# (id, a, s, seq, kind): kinds 0 +I, 1 -U, 2 +U, 3 -D
ROWS = [
    (1, 5, "x", 1, 0),
    (1, 7, None, 2, 2),
    (1, 7, "y", 3, 1),  # retracts the 7 (and "y")
    (2, 1, "p", 1, 0),
    (2, None, "q", 2, 3),  # deletes key 2
    (3, None, "r", 5, 0),
    (3, 4, None, 4, 0),  # older (sequence 4 < 5)
]


def merged(options: dict[str, str], rows: list[tuple[Any, ...]] = ROWS) -> dict[int, tuple[Any, ...]]:
    schema = TableSchema(0, FIELDS, 2, primary_keys=("id",), options=options)
    spec = merge_spec("/t", schema)
    values = ", ".join(
        f"({i}, {'NULL' if a is None else a}, {'NULL' if s is None else repr(s)}, {i}, {seq}, {kind}, 0, 1)"
        for i, a, s, seq, kind in rows
    )
    columns = "c0, c1, c2, __k0, __seq, __kind, __split, __lvl"
    source = f"SELECT *, c1 AS __sf0 FROM (VALUES {values}) AS v({columns})"  # a: the sequence field
    sql = merge_sql(spec, source, FIELDS)
    return {r[0]: r[1:] for r in duckdb.sql(sql).fetchall()}


def test_deduplicate_keeps_the_newest_and_drops_retracted_keys() -> None:
    assert merged({}) == {3: (None, "r")}  # 1's newest is -U, 2's is -D


def test_deduplicate_ignore_delete() -> None:
    assert merged({"ignore-delete": "true"}) == {1: (7, None), 2: (1, "p"), 3: (None, "r")}


def test_sequence_field_orders_before_the_sequence_number() -> None:
    rows = [(1, 9, "late", 1, 0), (1, 3, "early", 2, 0), (1, None, "null seq", 3, 0)]
    # sequence.field a: 9 is the largest; a null sorts first, so it never wins
    assert merged({"sequence.field": "a"}, rows) == {1: (9, "late")}
    assert merged({"sequence.field": "a", "sequence.field.sort-order": "descending"}, rows) == {
        1: (None, "null seq")
    }


def test_first_row_keeps_the_oldest_ignoring_retractions() -> None:
    assert merged({"merge-engine": "first-row"}) == {1: (5, "x"), 2: (1, "p"), 3: (4, None)}


def test_partial_update_takes_the_newest_non_null_per_column() -> None:
    adds = [r for r in ROWS if r[4] in (0, 2)]
    assert merged({"merge-engine": "partial-update"}, adds) == {1: (7, "x"), 2: (1, "p"), 3: (4, "r")}
    with pytest.raises(duckdb.InvalidInputException, match="ignore-delete"):
        merged({"merge-engine": "partial-update"})
    got = merged({"merge-engine": "partial-update", "ignore-delete": "true"})
    assert got == {1: (7, "x"), 2: (1, "p"), 3: (4, "r")}


def test_aggregation_retracts_where_paimon_can() -> None:
    options = {"merge-engine": "aggregation", "fields.a.aggregate-function": "sum"}
    # a: 5 + 7 - 7 = 5 for key 1; 1 - NULL = 1 for key 2; s: last_non_null_value with the
    # non-null "y" retracted -> null for key 1, "q" retracted (a -D row) -> null for key 2
    assert merged(options) == {1: (5, None), 2: (1, None), 3: (4, "r")}
    options["fields.s.aggregate-function"] = "last_value"
    assert merged(options) == {1: (5, None), 2: (1, None), 3: (4, "r")}


def test_aggregation_functions_without_retraction() -> None:
    adds = [r for r in ROWS if r[4] in (0, 2)]
    options = {
        "merge-engine": "aggregation",
        "fields.a.aggregate-function": "max",
        "fields.s.aggregate-function": "listagg",
        "fields.s.list-agg-delimiter": "|",
    }
    assert merged(options, adds) == {1: (7, "x"), 2: (1, "p"), 3: (4, "r")}
    product = {**options, "fields.a.aggregate-function": "product"}
    assert merged(product, [*adds, (1, 3, None, 9, 0)]) == {1: (105, "x"), 2: (1, "p"), 3: (4, "r")}
    options["fields.a.aggregate-function"] = "first_value"
    options["fields.s.aggregate-function"] = "first_non_null_value"
    assert merged(options, adds) == {1: (5, "x"), 2: (1, "p"), 3: (4, "r")}
    with pytest.raises(duckdb.InvalidInputException, match="'max' of column 'a' cannot retract"):
        merged({**options, "fields.a.aggregate-function": "max"})
    options["fields.a.ignore-retract"] = "true"
    options["fields.s.ignore-retract"] = "true"
    assert merged({**options, "fields.a.aggregate-function": "max"})[1] == (7, "x")


def test_unimplemented_options_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedError, match=re.escape("aggregation.remove-record-on-delete")):
        merged({"merge-engine": "aggregation", "aggregation.remove-record-on-delete": "true"})
    listagg = {"merge-engine": "aggregation", "fields.s.aggregate-function": "listagg"}
    with pytest.raises(UnsupportedError, match=re.escape("'fields.s.distinct'")):
        merged({**listagg, "fields.s.distinct": "true"})
    with pytest.raises(UnsupportedError, match=re.escape("sequence.field names unknown columns")):
        merged({"sequence.field": "nope"})

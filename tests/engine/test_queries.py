"""The engine's calls on a statement's cursor: column probes, temporary objects, SHOW rows,
and DuckDB's exceptions as iceduck's kinds."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest

from iceduck.engine import queries
from iceduck.engine.connection import Duck, open_database
from iceduck.engine.errors import is_conversion_error, is_duckdb_error, translate_duckdb_error
from iceduck.errors import NotFoundError, UnsupportedError, UserError


@pytest.fixture
def duck() -> Iterator[Duck]:
    database = open_database(threads=1)
    try:
        yield database.cursor()
    finally:
        database.close()


def test_describe_binds_the_query_without_computing_a_row(duck: Duck) -> None:
    # error() would fail the statement if a row were computed
    described = queries.describe(duck, "SELECT error('computed') AS a, 2 AS a, $1::DECIMAL(5, 2) AS d", [1])
    assert [name for name, _ in described] == ["a", "a_1", "d"]
    assert str(described[2][1]) == "DECIMAL(5,2)"
    assert queries.rows(duck, "SELECT 42") == [(42,)]  # no unfinished result left behind


def test_temp_table_is_dropped_even_when_the_block_fails(duck: Duck) -> None:
    with pytest.raises(ValueError), queries.temp_table(duck, "t", "SELECT $1 AS x", [7]) as table:
        assert table == '"t"'
        assert queries.rows(duck, f"SELECT x FROM {table}") == [(7,)]
        raise ValueError("the statement failed")
    assert queries.rows(duck, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 't'") == [(0,)]


def test_registered_arrow_table_lives_for_the_block(duck: Duck) -> None:
    with queries.registered(duck, "addresses", pa.table({"_pos": [1, 2]})) as name:
        assert queries.arrow_rows(duck, f"SELECT sum(_pos) AS s FROM {name}").to_pylist() == [{"s": 3}]
    with pytest.raises(duckdb.CatalogException):
        queries.rows(duck, 'SELECT * FROM "addresses"')


def test_select_lists_leaves_the_rows_on_the_cursor(duck: Duck) -> None:
    queries.select_lists(duck, {"namespace": ["a", "b"], "name": ["t", "u"]})
    assert [d[0] for d in duck.description] == ["namespace", "name"]
    assert duck.fetchall() == [("a", "t"), ("b", "u")]


def test_epoch_ms_and_parameters(duck: Duck) -> None:
    assert queries.epoch_ms(duck, "TIMESTAMPTZ '1970-01-01 00:00:01+00'") == 1000
    assert queries.epoch_ms(duck, "NULL") is None
    assert queries.duck_params(None) is None
    assert queries.duck_params((1, 2)) == [1, 2]
    assert queries.duck_params({"a": 1}) == {"a": 1}


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT * FROM no_such_table", NotFoundError),
        ("SELEC 1", UserError),
        ("SELECT CAST('x' AS INTEGER)", UserError),
        # a file the user names is not a table's: a missing one is the statement's mistake
        ("SELECT * FROM read_parquet('/nonexistent/iceduck/x.parquet')", NotFoundError),
    ],
)
def test_duckdb_errors_become_iceduck_kinds(duck: Duck, sql: str, kind: type[Exception]) -> None:
    with pytest.raises(duckdb.Error) as raised:
        queries.rows(duck, sql)
    assert is_duckdb_error(raised.value)
    translated = translate_duckdb_error(raised.value)
    assert isinstance(translated, kind)


def test_only_duckdb_errors_are_translated() -> None:
    assert translate_duckdb_error(ValueError("x")) is None
    assert not is_duckdb_error(ValueError("x"))
    assert is_conversion_error(duckdb.ConversionException("x"))
    assert isinstance(translate_duckdb_error(duckdb.NotImplementedException("x")), UnsupportedError)
    interrupted = translate_duckdb_error(duckdb.InterruptException("x"))
    assert isinstance(interrupted, UserError) and str(interrupted) == "the query was interrupted"

"""DELETE, UPDATE and MERGE naming the target's columns by the table's full name
(``ns.t.id``, ``iceduck.ns.t.id``), as Spark and DuckDB accept them, equal DuckDB's
results on plain tables; with an alias the full name is hidden, as in both."""

from __future__ import annotations

import duckdb
import pytest

from iceduck.errors import UserError
from tests.ops.conftest import LAYOUTS, create_events
from tests.ops.harness import Pair


def _source(pair: Pair) -> None:
    pair.run(
        "CREATE TABLE ns.src (id INT, data STRING, v DOUBLE)",
        reference="CREATE TABLE ns.src (id INT, data VARCHAR, v DOUBLE)",
    )
    pair.run("INSERT INTO ns.src VALUES (1, 'm1', 1.0), (3, 'del', 3.0), (500, 'new', 5.0)")


def _catalog_qualified(pair: Pair, sql: str) -> None:
    """Run ``sql`` (which names ``iceduck.ns...``) on iceduck, and on DuckDB with DuckDB's
    catalog name; the row counts must agree."""
    count = pair.ice.execute(sql)
    reference = pair.ref.execute(sql.replace("iceduck.ns.", "memory.ns.")).fetchone()
    assert reference is not None and count == reference[0]


@pytest.mark.parametrize(("version", "mode", "partitioned"), [LAYOUTS[1], LAYOUTS[6]])
def test_merge_with_qualified_names(pair: Pair, version: int, mode: str, partitioned: bool) -> None:
    t = create_events(pair, version, mode, partitioned)
    _source(pair)
    pair.run(
        "MERGE INTO ns.t USING ns.src s ON ns.t.id = s.id "
        "WHEN MATCHED AND ns.t.id = 3 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET data = s.data, v = ns.t.v + s.v "
        "WHEN NOT MATCHED THEN INSERT (id, data) VALUES (s.id, s.data)"
    )
    pair.check(t)
    _catalog_qualified(
        pair,
        "MERGE INTO ns.t USING ns.src ON iceduck.ns.t.id = iceduck.ns.src.id + 100 "
        "WHEN MATCHED THEN UPDATE SET data = ns.src.data || iceduck.ns.t.data "
        "WHEN NOT MATCHED BY SOURCE AND iceduck.ns.t.id >= 205 THEN DELETE",
    )
    pair.check(t)


def test_update_and_delete_with_qualified_target(pair: Pair) -> None:
    t = create_events(pair, 3, "merge-on-read", True)
    pair.run("UPDATE ns.t SET v = ns.t.v + 1, data = upper(ns.t.data) WHERE ns.t.id % 5 = 0")
    pair.check(t)
    pair.run("DELETE FROM ns.t WHERE ns.t.id % 7 = 0 AND ns.t.cat = 'a'")
    pair.check(t)
    _catalog_qualified(pair, "UPDATE ns.t SET v = -iceduck.ns.t.id WHERE iceduck.ns.t.v IS NULL")
    pair.check(t)
    _catalog_qualified(pair, "DELETE FROM ns.t WHERE iceduck.ns.t.id > 200")
    pair.check(t)
    # a subquery's table is not a column: ns.t.files stays the metadata table
    count = pair.ice.execute(
        "DELETE FROM ns.t WHERE ns.t.id = 1 AND _file IN (SELECT file_path FROM ns.t.files)"
    )
    pair.ref.execute("DELETE FROM ns.t WHERE id = 1")
    assert count == 1
    pair.check(t)


def test_qualified_assignment_target(pair: Pair) -> None:
    """``SET ns.t.v = ...`` assigns ``v`` (Spark resolves assignment keys like columns;
    DuckDB refuses qualified SET targets, so the reference names the column alone)."""
    t = create_events(pair, 2, "copy-on-write", False)
    pair.run("UPDATE ns.t SET ns.t.v = 7 WHERE id < 3", reference="UPDATE ns.t SET v = 7 WHERE id < 3")
    pair.run(
        "UPDATE ns.t SET iceduck.ns.t.data = 'q' WHERE id = 5",
        reference="UPDATE ns.t SET data = 'q' WHERE id = 5",
    )
    pair.check(t)


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM ns.t AS x WHERE ns.t.id = 1",
        "UPDATE ns.t x SET v = 1 WHERE ns.t.id = 1",
        "MERGE INTO ns.t AS x USING ns.src s ON ns.t.id = s.id WHEN MATCHED THEN DELETE",
        "MERGE INTO ns.t AS x USING ns.src s ON x.id = s.id WHEN MATCHED THEN UPDATE SET v = t.v",
    ],
)
def test_an_alias_hides_the_table_name(pair: Pair, sql: str) -> None:
    t = create_events(pair, 2, "copy-on-write", False)
    _source(pair)
    with pytest.raises(UserError, match="not found"):
        pair.ice.execute(sql)
    with pytest.raises(duckdb.BinderException):
        pair.ref.execute(sql)
    pair.check(t)


@pytest.mark.parametrize(
    "clauses",
    [
        "WHEN MATCHED THEN UPDATE SET v = 1 WHEN MATCHED AND s.v > 1 THEN DELETE",
        "WHEN NOT MATCHED THEN INSERT * WHEN NOT MATCHED AND s.v > 1 THEN INSERT *",
        "WHEN NOT MATCHED BY SOURCE THEN DELETE WHEN NOT MATCHED BY SOURCE AND t.v > 1 THEN DELETE",
    ],
)
def test_merge_refuses_an_unconditional_clause_before_another_of_its_kind(pair: Pair, clauses: str) -> None:
    t = create_events(pair, 2, "copy-on-write", False)
    _source(pair)
    sql = f"MERGE INTO ns.t t USING ns.src s ON t.id = s.id {clauses}"
    with pytest.raises(UserError, match="only the last one may omit its condition"):
        pair.ice.execute(sql)
    with pytest.raises(duckdb.ParserException, match="unreachable"):
        pair.ref.execute(sql)
    pair.check(t)

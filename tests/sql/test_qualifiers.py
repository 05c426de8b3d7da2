"""Columns qualified by a table's full name -> by its alias (iceduck.sql.qualifiers)."""

from __future__ import annotations

import duckdb
import pytest

from iceduck.sql.qualifiers import qualifiers, requalify, strip_qualifier, table_qualifiers

T = table_qualifiers("iceduck", ("db", "t"), ("db", "t"))


def test_qualifiers_are_the_longer_suffixes_of_each_name() -> None:
    assert T == (("iceduck", "db", "t"), ("db", "t"))
    assert table_qualifiers("Cat", ("A", "b", "T"), ("cat", "a", "b", "t")) == (
        ("cat", "a", "b", "t"),
        ("a", "b", "t"),
        ("b", "t"),
    )
    # a branch written after the table name qualifies too
    assert ("db", "t", "branch_x") in table_qualifiers("iceduck", ("db", "t"), ("db", "t", "branch_x"))
    assert qualifiers(("s",)) == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("db.t.k = 1", '"t".k = 1'),
        ("iceduck.db.t.k + DB.T.v", '"t".k + "t".v'),
        ('"db"."t"."k" > 0 AND "DB".t.s.f', '"t"."k" > 0 AND "t".s.f'),
        ("db.t.* IS NOT NULL", '"t".* IS NOT NULL'),
        # not the target: other catalogs, tables, struct fields, strings, comments
        ("other.db.t.k = 'db.t.k' -- db.t.k", "other.db.t.k = 'db.t.k' -- db.t.k"),
        ("t.k = db.k AND db.t = 1", "t.k = db.k AND db.t = 1"),
        # a table in a subquery stays a table; its columns are rewritten
        (
            "k IN (SELECT file_path FROM db.t.files WHERE db.t.k > 0)",
            'k IN (SELECT file_path FROM db.t.files WHERE "t".k > 0)',
        ),
        ("db.t.k = $1 AND db.t.v = ?", '"t".k = $1 AND "t".v = ?'),
    ],
)
def test_requalify(text: str, expected: str) -> None:
    assert requalify(text, T, "t") == expected


def test_requalify_quotes_the_alias_and_keeps_unparsable_text() -> None:
    assert requalify("db.t.k", T, 'my "t"') == '"my ""t""".k'
    assert requalify("db.t.k = ((", T, "t") == "db.t.k = (("
    assert requalify("db.t.k", (), "t") == "db.t.k"


def test_requalified_text_runs_on_duckdb() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE x (k INT, s STRUCT(f INT))")
    con.execute("INSERT INTO x VALUES (1, {'f': 2})")
    text = requalify("iceduck.db.t.k + db.t.s.f", T, "t")
    assert con.execute(f"SELECT {text} FROM x AS t").fetchall() == [(3,)]


def test_strip_qualifier() -> None:
    assert strip_qualifier(("db", "t", "v"), T) == ("v",)
    assert strip_qualifier(("ICEDUCK", "db", "t", "p", "x"), T) == ("p", "x")
    assert strip_qualifier(("db", "t"), T) == ("db", "t")  # struct db, field t
    assert strip_qualifier(("v",), T) == ("v",)

"""Parameters of a piece of a statement, found by the tokenizer (iceduck.sql.parameters),
and write statements whose strings and comments look like parameters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import UserError
from iceduck.sql.parameters import parameter_names, parameters_left, parameters_used


def test_parameters_are_tokens_not_text() -> None:
    sql = "SELECT $1, $name, '$2' -- $3\n /* $4 */ FROM t WHERE a = $$x$5$$ AND b = $select"
    assert parameter_names(sql) == {"1", "name", "select"}
    assert parameter_names("SELECT 'no $ here', 2") == frozenset()
    assert parameter_names("SELECT 1") == frozenset()


def test_parameters_used_picks_the_subset_a_piece_names() -> None:
    assert parameters_used("SELECT $2 FROM t WHERE s = '$1'", [10, 20]) == {"2": 20}
    assert parameters_used("SELECT $a WHERE s = '$b'", {"a": 1, "b": 2}) == {"a": 1}
    assert parameters_used("SELECT $3", [1]) == {}  # out of range: DuckDB names what is missing
    assert parameters_used("SELECT '$1'", [1]) is None
    assert parameters_used("SELECT $1", None) is None


def test_parameters_left_after_a_time_travel_parameter_is_consumed() -> None:
    # every parameter still in the text: all of them, so DuckDB still checks their count
    assert parameters_left("SELECT $1 FROM t", "SELECT $1 FROM (...) AS t", [1, 2]) == [1, 2]
    # the clause's $2 was resolved by iceduck: only $1 and $3 go to DuckDB
    rewritten = "SELECT $1 FROM (...) AS t WHERE a = $3"
    assert parameters_left("SELECT $1 FROM t VERSION AS OF $2 WHERE a = $3", rewritten, [1, 2, 3]) == {
        "1": 1,
        "3": 3,
    }
    assert parameters_left("SELECT 1 FROM t VERSION AS OF $v", "SELECT 1 FROM (...) AS t", {"v": 5}) is None


def test_unreadable_text_names_no_parameters() -> None:
    assert parameter_names("SELECT '$1") == frozenset()  # DuckDB reports the open string itself


@pytest.fixture
def con(tmp_path: Path) -> Connection:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint, s string) USING iceberg")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'b'), (3, '$1')")
    return con


def rows(con: Connection) -> list[tuple[Any, ...]]:
    return sorted(con.execute("SELECT id, s FROM db.t").fetchall())


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (
            "UPDATE db.t SET s = 'costs $1' WHERE id = $2",
            [0, 1],
            [(1, "costs $1"), (2, "b"), (3, "$1")],
        ),
        (
            "UPDATE db.t SET s = $s WHERE id = $id AND s <> '$other' -- $other",
            {"s": "z", "id": 2, "other": 0},
            [(1, "a"), (2, "z"), (3, "$1")],
        ),
        ("UPDATE db.t SET s = '?' WHERE id = ?", [1], [(1, "?"), (2, "b"), (3, "$1")]),
        ("DELETE FROM db.t WHERE s = '$1' /* $2 */ AND id = $2", [0, 3], [(1, "a"), (2, "b")]),
        ("DELETE FROM db.t WHERE s <> '?' AND id = ? -- ?", [2], [(1, "a"), (3, "$1")]),
        ("INSERT INTO db.t SELECT $2, '$1'", [0, 9], [(1, "a"), (2, "b"), (3, "$1"), (9, "$1")]),
        ("INSERT INTO db.t SELECT ?, '?' /* ? */", [9], [(1, "a"), (2, "b"), (3, "$1"), (9, "?")]),
    ],
)
def test_strings_and_comments_hold_no_parameters(
    con: Connection, sql: str, params: Any, expected: list[tuple[Any, ...]]
) -> None:
    cur = con.cursor()
    cur.execute(sql, params)
    assert cur.rowcount == 1
    assert rows(con) == expected


def _snapshots(con: Connection) -> list[tuple[int, Any]]:
    con.execute("INSERT INTO db.t VALUES (4, 'd')")
    query = "SELECT snapshot_id, committed_at FROM db.t.snapshots ORDER BY committed_at"
    return con.execute(query).fetchall()


@pytest.mark.parametrize(
    ("clause", "bind"),
    [
        ("VERSION AS OF ?", lambda s: [s[0]]),
        ("FOR SYSTEM_VERSION AS OF ?", lambda s: [s[0]]),
        ("VERSION AS OF $1", lambda s: [s[0]]),
        ("VERSION AS OF $v", lambda s: {"v": s[0]}),
        ("TIMESTAMP AS OF ?", lambda s: [s[1]]),
        ("FOR SYSTEM_TIME AS OF ?", lambda s: [s[1]]),
        ("TIMESTAMP AS OF $t", lambda s: {"t": str(s[1])}),
    ],
)
def test_time_travel_takes_parameters(con: Connection, clause: str, bind: Any) -> None:
    """The same text (parsed once, from the session's cache) reads the version each run binds."""
    first, second = _snapshots(con)
    sql = f"SELECT count(*) FROM db.t {clause}"
    assert con.execute(sql, bind(first)).fetchall() == [(3,)]
    assert con.execute(sql, bind(second)).fetchall() == [(4,)]
    assert con.execute(sql, bind(first)).fetchall() == [(3,)]


def test_time_travel_parameter_among_others(con: Connection) -> None:
    first, _ = _snapshots(con)
    sql = "SELECT ?::INT + count(*), ? FROM db.t VERSION AS OF ? WHERE id > ?"
    assert con.execute(sql, [100, "x", first[0], 1]).fetchall() == [(102, "x")]
    con.execute(f"ALTER TABLE db.t CREATE TAG old AS OF VERSION {first[0]}")
    assert con.execute(sql, [0, "y", "old", 0]).fetchall() == [(3, "y")]
    named = "SELECT count(*) FROM db.t VERSION AS OF $v WHERE s <> $s"
    assert con.execute(named, {"v": first[0], "s": "a"}).fetchall() == [(2,)]


def test_time_travel_parameters_in_writes(con: Connection) -> None:
    first, _ = _snapshots(con)
    con.execute("INSERT INTO db.t SELECT id + 10, s FROM db.t VERSION AS OF ? WHERE id < ?", [first[0], 3])
    assert con.execute("SELECT count(*) FROM db.t").fetchall() == [(6,)]
    con.execute("CREATE TABLE db.c AS SELECT * FROM db.t VERSION AS OF ? WHERE id > ?", [first[0], 1])
    assert sorted(con.execute("SELECT id FROM db.c").fetchall()) == [(2,), (3,)]
    con.execute(
        "MERGE INTO db.c USING db.t VERSION AS OF ? AS s ON c.id = s.id WHEN NOT MATCHED THEN INSERT *",
        [first[0]],
    )
    assert sorted(con.execute("SELECT id FROM db.c").fetchall()) == [(1,), (2,), (3,)]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([1.5], r"VERSION AS OF takes a snapshot id .*, got parameter \$1 = 1\.5"),
        ([None], r"got parameter \$1 = None"),
        ([], r"but parameter \$1 has no value"),
    ],
)
def test_bad_time_travel_parameter(con: Connection, params: Any, message: str) -> None:
    with pytest.raises(UserError, match=message):
        con.execute("SELECT * FROM db.t VERSION AS OF ?", params)

"""``CALL system.*`` through a connection: finding the procedure, binding its arguments as
Spark does, and the result columns (``ancestors_of`` as the example)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint)")
    for i in range(3):
        con.execute("INSERT INTO db.t VALUES (?)", [i])
    yield con
    con.close()


def snapshots(con: Connection) -> list[tuple[int, int]]:
    """(snapshot_id, committed_at in ms) of db.t, oldest first."""
    rows = con.execute("SELECT snapshot_id, epoch_ms(committed_at) FROM db.t.snapshots ORDER BY committed_at")
    return [(int(a), int(b)) for a, b in rows.fetchall()]


def test_ancestors_of_the_current_snapshot_newest_first(con: Connection) -> None:
    cur = con.execute("CALL system.ancestors_of('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [("snapshot_id", "BIGINT"), ("timestamp", "BIGINT")]
    assert cur.fetchall() == snapshots(con)[::-1]


@pytest.mark.parametrize(
    "call",
    [
        "CALL iceduck.system.ancestors_of(table => 'db.t', snapshot_id => ?)",
        "CALL system.ancestors_of(snapshot_id => $1, table => 'iceduck.db.t')",
        "CALL system.ancestors_of('db.t', ?)",
    ],
)
def test_named_positional_and_bound_arguments(con: Connection, call: str) -> None:
    second = snapshots(con)[1]
    assert con.execute(call, [second[0]]).fetchall() == [second, snapshots(con)[0]]


def test_a_current_namespace_and_an_empty_table(con: Connection) -> None:
    con.execute("USE db")
    con.execute("CREATE TABLE e (a int)")
    assert con.execute("CALL system.ancestors_of('e')").fetchall() == []
    assert len(con.execute("CALL system.ancestors_of('t')").fetchall()) == 3


@pytest.mark.parametrize(
    ("call", "kind", "says"),
    [
        ("CALL system.no_such('db.t')", iceduck.ProgrammingError, "procedure system.no_such does not exist"),
        ("CALL system.ancestors_of()", iceduck.ProgrammingError, "missing required parameters: table"),
        ("CALL system.ancestors_of(tbl => 'db.t')", iceduck.ProgrammingError, "has no parameter tbl"),
        ("CALL system.ancestors_of('db.t', 1, 2)", iceduck.ProgrammingError, "takes at most 2 arguments"),
        ("CALL system.ancestors_of('db.t', 'x')", iceduck.ProgrammingError, "snapshot_id takes a long"),
        ("CALL system.ancestors_of('db.t', 5)", iceduck.ProgrammingError, "has no snapshot with id 5"),
        ("CALL system.ancestors_of('db.nope')", iceduck.ProgrammingError, "db.nope"),
        ("CALL spark_catalog.system.ancestors_of('db.t')", iceduck.ProgrammingError, "spark_catalog"),
        ("CALL system.ancestors_of('db.t', ?)", iceduck.ProgrammingError, "no value was given for parameter"),
    ],
)
def test_errors_name_the_problem(con: Connection, call: str, kind: type[Exception], says: str) -> None:
    with pytest.raises(kind) as raised:
        con.execute(call)
    assert says in str(raised.value)


@pytest.mark.parametrize("aware", [True, False])
def test_a_timestamp_parameter_takes_a_python_datetime(con: Connection, aware: bool) -> None:
    """A naive datetime is read in the session's zone (UTC unless SET TimeZone), as DuckDB reads one."""
    second_id, second_ms = snapshots(con)[1]
    when = datetime.fromtimestamp((second_ms + 1) / 1000, tz=UTC)
    value = when if aware else when.replace(tzinfo=None)
    rows = con.execute("CALL system.rollback_to_timestamp('db.t', ?)", [value]).fetchall()
    assert rows == [(snapshots(con)[2][0], second_id)]
    assert con.execute("SELECT count(*) FROM db.t").fetchone() == (2,)

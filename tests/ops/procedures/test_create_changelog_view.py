"""``CALL system.create_changelog_view``: Spark's arguments, its result, and a connection
view of the changes computed when read."""

from __future__ import annotations

import pytest

from iceduck.connection import Connection
from iceduck.errors import UserError


def _history(con: Connection) -> list[int]:
    con.execute("CREATE TABLE db.t (id INT NOT NULL, v STRING)")
    con.execute("INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")
    con.execute("UPDATE db.t SET v = 'B' WHERE id = 2")
    con.execute("DELETE FROM db.t WHERE id = 1")
    rows = con.execute("SELECT snapshot_id FROM db.t.history ORDER BY made_current_at").fetchall()
    return [r[0] for r in rows]


def test_default_name_and_rows(con: Connection) -> None:
    _history(con)
    assert con.execute("CALL system.create_changelog_view(table => 'db.t')").fetchall() == [("`t_changes`",)]
    rows = con.execute("SELECT id, v, _change_type, _change_ordinal FROM t_changes ORDER BY ALL").fetchall()
    assert rows == [
        (1, "a", "DELETE", 2),
        (1, "a", "INSERT", 0),
        (2, "B", "INSERT", 1),
        (2, "b", "DELETE", 1),
        (2, "b", "INSERT", 0),
    ]


def test_the_view_is_computed_when_read(con: Connection) -> None:
    _history(con)
    con.execute("CALL system.create_changelog_view(table => 'db.t', changelog_view => 'cv')")
    con.execute("INSERT INTO db.t VALUES (9, 'z')")
    assert con.execute("SELECT max(_change_ordinal), count(*) FROM cv").fetchall() == [(3, 6)]


def test_options_identifier_columns_and_updates(con: Connection) -> None:
    ids = _history(con)
    con.execute(
        "CALL system.create_changelog_view(table => 'db.t', changelog_view => 'upd', "
        f"options => map('start-snapshot-id', '{ids[0]}', 'end-snapshot-id', '{ids[1]}'), "
        "identifier_columns => array('id'))"
    )
    rows = con.execute(
        "SELECT id, v, _change_type, _commit_snapshot_id FROM upd ORDER BY _change_type"
    ).fetchall()
    assert rows == [(2, "B", "UPDATE_AFTER", ids[1]), (2, "b", "UPDATE_BEFORE", ids[1])]
    con.execute("CALL system.create_changelog_view('db.t', 'net', map(), false, NULL, true)")
    assert con.execute("SELECT id, v, _change_type FROM net").fetchall() == [(2, "B", "INSERT")]


def test_timestamps(con: Connection) -> None:
    _history(con)
    times = con.execute("SELECT epoch_ms(committed_at) FROM db.t.snapshots ORDER BY committed_at").fetchall()
    con.execute(
        "CALL system.create_changelog_view(table => 'db.t', changelog_view => 'late', "
        f"options => map('start-timestamp', '{times[1][0]}'))"
    )
    # Spark's rule: a start time equal to a commit's time starts after that commit
    assert con.execute("SELECT DISTINCT _change_ordinal, v FROM late").fetchall() == [(0, "a")]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "table => 'db.t', compute_updates => true, net_changes => true",
            "Not support net changes with update images",
        ),
        ("table => 'db.t', compute_updates => true", "identifier columns are not set"),
        (
            "table => 'db.t', options => map('start-snapshot-id', '1', 'start-timestamp', '2')",
            "Cannot set both",
        ),
        ("table => 'db.t', options => map('colour', 'red')", "unknown option 'colour'"),
        ("table => 'db.t', options => map('end-snapshot-id', 'x')", "must be a number"),
    ],
)
def test_errors(con: Connection, call: str, message: str) -> None:
    _history(con)
    with pytest.raises(UserError, match=message):
        con.execute(f"CALL system.create_changelog_view({call})")

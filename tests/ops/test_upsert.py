"""Upserts (INSERT OR REPLACE, write.upsert.enabled): equality deletes plus new rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import iceduck
from iceduck.connection import Connection
from iceduck.errors import UnsupportedError, UserError, ValidationError
from iceduck.ops import upsert as upsert_module
from iceduck.ops.procedures import rewrite_data


def _table(con: Connection, extra: str = "", version: int = 2, name: str = "db.t") -> str:
    con.execute(
        f"CREATE TABLE {name} (id INT NOT NULL, v STRING, n BIGINT){extra} "
        f"TBLPROPERTIES ('format-version'='{version}')"
    )
    con.execute(f"ALTER TABLE {name} SET IDENTIFIER FIELDS id")
    con.execute(f"INSERT INTO {name} VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
    return name


def _rows(con: Connection, sql: str = "SELECT * FROM db.t ORDER BY ALL") -> list[tuple]:
    return con.execute(sql).fetchall()


@pytest.mark.parametrize("version", [2, 3])
def test_insert_or_replace_replaces_by_key_and_appends_new_keys(con: Connection, version: int) -> None:
    _table(con, version=version)
    cur = con.execute("INSERT OR REPLACE INTO db.t VALUES (2, 'B', 21), (4, 'd', 40)")
    assert cur.rowcount == 2
    assert _rows(con) == [(1, "a", 10), (2, "B", 21), (3, "c", 30), (4, "d", 40)]
    deletes = _rows(con, "SELECT content, record_count, equality_ids FROM db.t.delete_files")
    assert deletes == [(2, 2, [1])]
    current = "(SELECT snapshot_id FROM db.t.refs WHERE name = 'main')"
    op, summary = _rows(con, f"SELECT operation, summary FROM db.t.snapshots WHERE snapshot_id = {current}")[
        0
    ]
    assert op == "overwrite"
    assert summary["added-equality-deletes"] == "2"
    assert summary["added-data-files"] == "1"


def test_older_snapshot_keeps_the_replaced_rows(con: Connection) -> None:
    _table(con)
    before = _rows(con, "SELECT snapshot_id FROM db.t.refs WHERE name = 'main'")[0][0]
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 11)")
    assert _rows(con, f"SELECT * FROM db.t VERSION AS OF {before} ORDER BY id")[0] == (1, "a", 10)
    assert _rows(con)[0] == (1, "A", 11)


def test_last_row_of_a_key_wins(con: Connection) -> None:
    _table(con)
    cur = con.execute(
        "INSERT OR REPLACE INTO db.t VALUES "
        "(5, 'x', 1), (1, 'first', 1), (5, 'y', 2), (1, 'last', 2), (5, 'z', 3)"
    )
    assert cur.rowcount == 2
    assert _rows(con) == [(1, "last", 2), (2, "b", 20), (3, "c", 30), (5, "z", 3)]


def test_keys_compare_as_the_column_type(con: Connection) -> None:
    _table(con)
    con.execute("INSERT OR REPLACE INTO db.t VALUES ('02', 'text', 1), ('2', 'int', 2)")
    assert _rows(con, "SELECT * FROM db.t WHERE id = 2") == [(2, "int", 2)]


def test_upsert_enabled_property_makes_insert_an_upsert(con: Connection) -> None:
    _table(con)
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='true')")
    con.execute("INSERT INTO db.t (id, v) VALUES (3, 'C')")
    assert _rows(con) == [(1, "a", 10), (2, "b", 20), (3, "C", None)]
    con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='false')")
    con.execute("INSERT INTO db.t VALUES (3, 'again', 0)")
    assert _rows(con, "SELECT count(*) FROM db.t WHERE id = 3") == [(2,)]


def test_bad_upsert_property_value_is_refused(con: Connection) -> None:
    _table(con)
    with pytest.raises(ValidationError, match=r"write.upsert.enabled"):
        con.execute("ALTER TABLE db.t SET TBLPROPERTIES ('write.upsert.enabled'='yes')")


def test_upsert_reads_no_data_file(con: Connection, tmp_path: Path) -> None:
    """Nothing of the table is read: the data files can even be gone."""
    _table(con)
    for f in (tmp_path / "wh" / "db" / "t" / "data").rglob("*.parquet"):
        f.unlink()
    con.execute("INSERT OR REPLACE INTO db.t VALUES (2, 'B', 21)")
    assert _rows(con, "SELECT count(*) FROM db.t.delete_files") == [(1,)]


@pytest.mark.parametrize("partition", ["id", "bucket(4, id)", "truncate(2, id)"])
def test_partitioned_by_key_writes_one_delete_file_per_partition(con: Connection, partition: str) -> None:
    _table(con, f" PARTITIONED BY ({partition})")
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1), (2, 'B', 2), (9, 'new', 9)")
    assert _rows(con) == [(1, "A", 1), (2, "B", 2), (3, "c", 30), (9, "new", 9)]
    deletes = _rows(con, "SELECT partition::VARCHAR, record_count FROM db.t.delete_files ORDER BY ALL")
    data = _rows(con, "SELECT DISTINCT partition::VARCHAR FROM db.t.files WHERE content = 0")
    assert {p for p, _ in deletes} <= {p for (p,) in data}
    assert sum(n for _, n in deletes) == 3


def test_partitioned_by_a_non_key_column_is_refused(con: Connection) -> None:
    _table(con, " PARTITIONED BY (v)")
    with pytest.raises(ValidationError, match=r"partitioned by v .*not an identifier field"):
        con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1)")
    assert _rows(con, "SELECT count(*) FROM db.t") == [(3,)]
    assert _rows(con, "SELECT count(*) FROM db.t.snapshots") == [(1,)]


def test_older_partition_spec_gets_its_own_deletes(con: Connection) -> None:
    """After partition evolution, rows written under the old spec are replaced too."""
    _table(con, " PARTITIONED BY (bucket(2, id))")
    con.execute("ALTER TABLE db.t REPLACE PARTITION FIELD id_bucket WITH id")
    con.execute("INSERT INTO db.t VALUES (7, 'g', 70)")
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1), (7, 'G', 71)")
    assert _rows(con) == [(1, "A", 1), (2, "b", 20), (3, "c", 30), (7, "G", 71)]
    specs = _rows(con, "SELECT DISTINCT spec_id FROM db.t.delete_files ORDER BY 1")
    assert specs == [(0,), (1,)]


def test_evolved_spec_on_a_non_key_column_is_refused(con: Connection) -> None:
    _table(con, " PARTITIONED BY (v)")
    con.execute("ALTER TABLE db.t DROP PARTITION FIELD v")
    with pytest.raises(ValidationError, match="spec 0"):
        con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1)")


def test_two_field_key(con: Connection) -> None:
    con.execute("CREATE TABLE db.k (a INT NOT NULL, b STRING NOT NULL, v INT) PARTITIONED BY (b)")
    con.execute("ALTER TABLE db.k SET IDENTIFIER FIELDS a, b")
    con.execute("INSERT INTO db.k VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', 3)")
    con.execute("INSERT OR REPLACE INTO db.k VALUES (1, 'y', 20), (2, 'y', 30)")
    expected = [(1, "x", 1), (1, "y", 20), (2, "x", 3), (2, "y", 30)]
    assert _rows(con, "SELECT * FROM db.k ORDER BY ALL") == expected
    assert _rows(con, "SELECT DISTINCT equality_ids FROM db.k.delete_files") == [([1, 2],)]


def test_key_nested_in_a_struct(con: Connection) -> None:
    con.execute("CREATE TABLE db.s (k STRUCT<id: INT NOT NULL> NOT NULL, v STRING)")
    con.execute("ALTER TABLE db.s SET IDENTIFIER FIELDS k.id")
    con.execute("INSERT INTO db.s VALUES ({'id': 1}, 'a'), ({'id': 2}, 'b')")
    con.execute("INSERT OR REPLACE INTO db.s VALUES ({'id': 2}, 'B')")
    assert _rows(con, "SELECT k.id, v FROM db.s ORDER BY ALL") == [(1, "a"), (2, "B")]


def test_null_key_is_refused_and_nothing_lands(con: Connection, tmp_path: Path) -> None:
    _table(con)
    with pytest.raises(ValidationError, match="id"):
        con.execute("INSERT OR REPLACE INTO db.t VALUES (NULL, 'x', 1)")
    assert _rows(con, "SELECT count(*) FROM db.t.snapshots") == [(1,)]
    assert len(list((tmp_path / "wh" / "db" / "t" / "data").rglob("*.parquet"))) == 1


def test_no_identifier_fields_is_refused(con: Connection) -> None:
    con.execute("CREATE TABLE db.p (id INT, v STRING)")
    with pytest.raises(UserError, match=r"no identifier fields.*SET IDENTIFIER FIELDS"):
        con.execute("INSERT OR REPLACE INTO db.p VALUES (1, 'a')")
    con.execute("ALTER TABLE db.p SET TBLPROPERTIES ('write.upsert.enabled'='true')")
    with pytest.raises(UserError, match=r"write.upsert.enabled=true: table db.p has no identifier fields"):
        con.execute("INSERT INTO db.p VALUES (1, 'a')")


def test_format_version_1_is_refused(con: Connection) -> None:
    _table(con, version=1)
    with pytest.raises(ValidationError, match="format-version 1"):
        con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1)")


def test_other_conflict_spellings_name_insert_or_replace(con: Connection) -> None:
    _table(con)
    with pytest.raises(UnsupportedError, match="INSERT OR REPLACE"):
        con.execute("INSERT OR IGNORE INTO db.t VALUES (1, 'A', 1)")
    with pytest.raises(UnsupportedError, match="INSERT OR REPLACE"):
        con.execute("INSERT INTO db.t VALUES (1, 'A', 1) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v")
    with pytest.raises(UserError, match="cannot OVERWRITE"):
        con.execute("INSERT OR REPLACE OVERWRITE db.t VALUES (1, 'A', 1)")


def test_empty_upsert_commits_nothing(con: Connection) -> None:
    _table(con)
    cur = con.execute("INSERT OR REPLACE INTO db.t SELECT * FROM db.t WHERE id < 0")
    assert cur.rowcount == 0
    assert _rows(con, "SELECT count(*) FROM db.t.snapshots") == [(1,)]


def test_upsert_by_name_and_column_list(con: Connection) -> None:
    _table(con)
    con.execute("INSERT OR REPLACE INTO db.t BY NAME SELECT 'X' AS v, 1 AS id")
    con.execute("INSERT OR REPLACE INTO db.t (n, id) VALUES (99, 2)")
    assert _rows(con) == [(1, "X", None), (2, None, 99), (3, "c", 30)]


def test_concurrent_upserts_both_land_last_wins(tmp_path: Path) -> None:
    one = iceduck.connect(tmp_path / "wh")
    one.execute("CREATE NAMESPACE db")
    _table(one)
    two = iceduck.connect(tmp_path / "wh")
    two.execute("SELECT * FROM db.t").fetchall()  # loads the table before the other commits
    one.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'one', 1)")
    two.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'two', 2), (2, 'two', 2)")
    assert _rows(one) == [(1, "two", 2), (2, "two", 2), (3, "c", 30)]


def test_compaction_applies_the_equality_deletes_and_keeps_none(con: Connection) -> None:
    _table(con, " PARTITIONED BY (bucket(2, id))")
    for i in range(3):
        con.execute(f"INSERT OR REPLACE INTO db.t VALUES (1, 'v{i}', {i}), ({10 + i}, 'n', {i})")
    expected = _rows(con)
    con.execute("CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))")
    assert _rows(con) == expected
    con.execute("CALL system.rewrite_position_delete_files(table => 'db.t')")
    assert _rows(con) == expected
    assert _rows(con, "SELECT count(*) FROM db.t.delete_files") == [(0,)]


def _before_commit(monkeypatch: pytest.MonkeyPatch, module: object, action: Callable[[], object]) -> None:
    """Run ``action`` once, just before ``module``'s next commit (the other writer wins the race)."""
    real = module.commit_changes  # type: ignore[attr-defined]
    done: list[bool] = []

    def wrapped(*args: object, **kwargs: object) -> object:
        if not done:
            done.append(True)
            action()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "commit_changes", wrapped)


def test_upsert_committed_during_a_compaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compaction's files keep the sequence number of the snapshot it read, so the
    upsert's deletes (committed meanwhile) still apply to them: both land, nothing returns."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    other = iceduck.connect(tmp_path / "wh")
    _table(con)
    con.execute("INSERT INTO db.t VALUES (4, 'd', 40)")
    _before_commit(
        monkeypatch, rewrite_data, lambda: other.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'new', 1)")
    )
    con.execute("CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))")
    assert _rows(con) == [(1, "new", 1), (2, "b", 20), (3, "c", 30), (4, "d", 40)]


def test_compaction_committed_during_an_upsert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The upsert reads nothing: it lands after the compaction, its deletes applying to the
    compacted files."""
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    other = iceduck.connect(tmp_path / "wh")
    _table(con)
    con.execute("INSERT INTO db.t VALUES (4, 'd', 40)")
    compact = "CALL system.rewrite_data_files(table => 'db.t', options => map('rewrite-all', 'true'))"
    _before_commit(monkeypatch, upsert_module, lambda: other.execute(compact))
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'new', 1), (4, 'D', 41)")
    assert _rows(con) == [(1, "new", 1), (2, "b", 20), (3, "c", 30), (4, "D", 41)]
    assert _rows(other) == _rows(con)


def test_upserts_in_a_transaction_see_each_other(con: Connection) -> None:
    _table(con)
    con.execute("BEGIN")
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'A', 1)")
    con.execute("INSERT OR REPLACE INTO db.t VALUES (1, 'AA', 2), (4, 'd', 4)")
    assert _rows(con) == [(1, "AA", 2), (2, "b", 20), (3, "c", 30), (4, "d", 4)]
    con.execute("COMMIT")
    assert _rows(con) == [(1, "AA", 2), (2, "b", 20), (3, "c", 30), (4, "d", 4)]


def test_upsert_into_a_branch_leaves_main(con: Connection) -> None:
    _table(con)
    con.execute("ALTER TABLE db.t CREATE BRANCH dev")
    con.execute("INSERT OR REPLACE INTO db.t.branch_dev VALUES (2, 'dev', 0)")
    assert _rows(con, "SELECT * FROM db.t.branch_dev ORDER BY id")[1] == (2, "dev", 0)
    assert _rows(con)[1] == (2, "b", 20)


@pytest.mark.parametrize(
    ("column_type", "old", "other"),
    [
        ("string", "'a'", "'b'"),
        ("decimal(10,2)", "1.50", "2.25"),
        ("date", "DATE '2024-01-01'", "DATE '2024-02-01'"),
        ("timestamp", "TIMESTAMP '2024-01-01 10:00:00'", "TIMESTAMP '2024-01-01 11:00:00'"),
        ("timestamptz", "TIMESTAMPTZ '2024-01-01 10:00:00+00'", "TIMESTAMPTZ '2024-01-01 11:00:00+00'"),
        (
            "uuid",
            "'00000000-0000-0000-0000-000000000001'::UUID",
            "'00000000-0000-0000-0000-000000000002'::UUID",
        ),
        ("binary", "'\\xAA'::BLOB", "'\\xBB'::BLOB"),
        ("boolean", "true", "false"),
    ],
)
def test_keys_of_each_type_partitioned_by_identity(
    con: Connection, column_type: str, old: str, other: str
) -> None:
    con.execute(f"CREATE TABLE db.k (k {column_type} NOT NULL, v INT) PARTITIONED BY (k)")
    con.execute("ALTER TABLE db.k SET IDENTIFIER FIELDS k")
    con.execute(f"INSERT INTO db.k VALUES ({old}, 1), ({other}, 2)")
    con.execute(f"INSERT OR REPLACE INTO db.k VALUES ({old}, 10)")
    assert _rows(con, "SELECT v FROM db.k ORDER BY v") == [(2,), (10,)]

"""The SQL surface of Paimon tables: attaching warehouses, names, versions, SHOW, DESCRIBE,
EXPLAIN and the refusals, on the small pypaimon-written warehouse checked in under
tests/fixtures/paimon (no pypaimon needed to run these)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import iceduck
from iceduck.dbapi import DatabaseError, NotSupportedError, ProgrammingError

WAREHOUSE = Path(__file__).resolve().parents[1] / "fixtures" / "paimon" / "wh"
PK = WAREHOUSE / "db.db" / "pk"


@pytest.fixture
def con(tmp_path: Path) -> iceduck.Connection:
    connection = iceduck.connect(str(tmp_path / "iceberg"), paimon=str(WAREHOUSE))
    yield connection
    connection.close()


def rows(con: iceduck.Connection, sql: str) -> list[tuple[object, ...]]:
    return con.execute(sql).fetchall()


def test_names_are_alias_database_table(con: iceduck.Connection) -> None:
    latest = rows(con, "SELECT id, v FROM paimon.db.pk ORDER BY id")
    assert latest == [(1, "a3"), (2, "b2"), (4, "d"), (5, "e3")]
    assert rows(con, "SELECT id, v FROM PAIMON.DB.PK ORDER BY id") == latest  # matched as DuckDB matches
    assert rows(con, f"SELECT id, v FROM paimon_scan('{PK}') ORDER BY id") == latest
    assert rows(con, "SELECT t.id FROM paimon.db.pk t WHERE t.id = 4") == [(4,)]
    assert rows(con, "SELECT pk.id FROM paimon.db.pk WHERE pk.id = 4") == [(4,)]


def test_versions_by_snapshot_tag_and_time(con: iceduck.Connection) -> None:
    first = [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert rows(con, "SELECT id, v FROM paimon.db.pk VERSION AS OF 1 ORDER BY id") == first
    assert rows(con, "SELECT id, v FROM paimon.db.pk VERSION AS OF 't1' ORDER BY id") == first
    assert rows(con, "SELECT id, v FROM paimon.db.pk FOR SYSTEM_VERSION AS OF 1 ORDER BY id") == first
    times = [json.loads((PK / "snapshot" / f"snapshot-{i}").read_text())["timeMillis"] for i in (1, 2, 3)]
    at = f"make_timestamp({times[1]} * 1000)"  # the second snapshot's commit time, as UTC micros
    second = rows(con, f"SELECT id, v FROM paimon.db.pk VERSION AS OF {2 if times[1] != times[0] else 1}")
    assert sorted(rows(con, f"SELECT id, v FROM paimon.db.pk TIMESTAMP AS OF {at}")) == sorted(second)
    with pytest.raises(ProgrammingError, match=r"no snapshot 99 \(snapshots: 1\.\.3\)"):
        rows(con, "SELECT * FROM paimon.db.pk VERSION AS OF 99")
    with pytest.raises(ProgrammingError, match=r"no tag 'nope' \(tags: t1\)"):
        rows(con, "SELECT * FROM paimon.db.pk VERSION AS OF 'nope'")
    with pytest.raises(ProgrammingError, match="no snapshot at or before"):
        rows(con, "SELECT * FROM paimon.db.pk TIMESTAMP AS OF TIMESTAMP '2000-01-01 00:00:00'")


def test_system_tables_both_spellings(con: iceduck.Connection) -> None:
    ids = [(1,), (2,), (3,)]
    assert rows(con, "SELECT snapshot_id FROM paimon.db.pk.snapshots ORDER BY 1") == ids
    assert rows(con, 'SELECT snapshot_id FROM paimon.db."pk$snapshots" ORDER BY 1') == ids
    assert rows(con, "SELECT tag_name FROM paimon.db.pk.tags") == [("t1",)]
    with pytest.raises(ProgrammingError, match="no system table 'nonsense'"):
        rows(con, "SELECT * FROM paimon.db.pk.nonsense")


def test_show_and_describe(con: iceduck.Connection) -> None:
    assert rows(con, "SHOW NAMESPACES IN paimon") == [("paimon.db",)]
    tables = [name for _, name in rows(con, "SHOW TABLES IN paimon.db")]
    assert {"app", "pk", "dv"} <= set(tables)
    assert rows(con, "SHOW TABLES IN paimon") == rows(con, "SHOW TABLES IN paimon.db")
    described = {r[0]: (r[1], r[2], r[3]) for r in rows(con, "DESCRIBE paimon.db.pk")}
    assert described["id"] == ("BIGINT", "NO", "PRI") and described["v"] == ("VARCHAR", "YES", None)
    with pytest.raises(ProgrammingError, match=r"Paimon database paimon\.nope not found; databases: db"):
        rows(con, "SHOW TABLES IN paimon.nope")


def test_explain_names_the_version_and_the_files(con: iceduck.Connection) -> None:
    sql = "EXPLAIN SELECT * FROM paimon.db.pk VERSION AS OF 't1' WHERE id = 2"
    text = "\n".join(str(r[0]) for r in rows(con, sql))
    assert "Paimon scan of paimon.db.pk (primary-key)" in text
    assert "snapshot: 1 (tag t1)" in text and "pushed filter: id == 2" in text
    assert "manifests:" in text and "data files:" in text and "DuckDB plan:" in text


def test_attach_detach_and_their_errors(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path / "iceberg")) as con:
        con.execute(f"ATTACH '{WAREHOUSE}' AS lake (TYPE paimon)")
        assert rows(con, "SELECT count(*) FROM lake.db.pk") == [(4,)]
        con.execute(f"ATTACH IF NOT EXISTS '{WAREHOUSE}' AS lake (TYPE paimon)")
        with pytest.raises(ProgrammingError, match="lake is attached already"):
            con.execute(f"ATTACH '{WAREHOUSE}' AS lake (TYPE paimon)")
        with pytest.raises(ProgrammingError, match="cannot name a Paimon warehouse"):
            con.execute(f"ATTACH '{WAREHOUSE}' AS iceduck (TYPE paimon)")
        with pytest.raises(DatabaseError, match="no Paimon warehouse folder"):
            con.execute(f"ATTACH '{tmp_path / 'missing'}' AS gone (TYPE paimon)")
        with pytest.raises(NotSupportedError, match="TYPE sqlite"):
            con.execute("ATTACH 'x.db' AS x (TYPE sqlite)")
        with pytest.raises(ProgrammingError, match=r"named lake\.<database>\.<table> \(databases: db"):
            con.execute("SELECT * FROM lake.pk")
        with pytest.raises(ProgrammingError, match=r"table lake\.db\.nope not found; tables of db: app"):
            con.execute("SELECT * FROM lake.db.nope")
        with pytest.raises(NotSupportedError, match="name Paimon tables in full"):
            con.execute("USE lake.db")
        con.execute("DETACH lake")
        with pytest.raises(ProgrammingError):
            con.execute("SELECT count(*) FROM lake.db.pk")
        with pytest.raises(ProgrammingError, match="no Paimon warehouse is attached as lake"):
            con.execute("DETACH lake")
        con.execute("DETACH IF EXISTS lake")


def test_several_warehouses_and_writes_refused(tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path / "iceberg"), paimon={"a": WAREHOUSE, "b": str(WAREHOUSE)}) as con:
        assert rows(con, "SELECT count(*) FROM a.db.pk JOIN b.db.pk USING (id)") == [(4,)]
        con.execute("CREATE NAMESPACE ns")
        con.execute("CREATE TABLE ns.copy AS SELECT id, v FROM a.db.pk")  # Paimon -> Iceberg
        assert rows(con, "SELECT count(*) FROM ns.copy") == [(4,)]
        for sql in (
            "INSERT INTO a.db.pk VALUES (9, 'x', 1, '+I', NULL)",
            "DELETE FROM a.db.pk WHERE id = 1",
            "CREATE TABLE a.db.t (x INT)",
        ):
            with pytest.raises(NotSupportedError, match="reads Paimon tables, it does not write them"):
                con.execute(sql)
        assert rows(con, "SELECT count(*) FROM a.db.pk") == [(4,)]


def test_shell_attaches_with_paimon_option(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable, "-m", "iceduck.cli", str(tmp_path / "iceberg"),
            "--paimon", f"lake={WAREHOUSE}", "--csv", "-c", "SELECT count(*) AS n FROM lake.db.pk",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["n", "4"]

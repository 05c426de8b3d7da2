"""Tables whose location is a ``file:`` URI, with partition folders Java escapes.

Java names a partition folder with ``URLEncoder`` (``s=a%2Fb``, ``ts=2024-01-01T10%3A00``)
and a table at ``file:/...`` stores its files as ``file:/.../s=a%2Fb/f.parquet``: the
folder is literally named ``s=a%2Fb``. iceduck used to percent-decode ``file:`` paths for
its own I/O (and DuckDB did not), so every DELETE or UPDATE that read such a file failed
with "data file does not exist". Spark writes ``file:`` locations whenever its warehouse is
configured as a ``file:`` URI; the Spark side is tests/interop/test_io_file_uri_spark.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import iceduck

ROWS = [("a/b", 1), ("é", 2), ("50%", 3), ("x y", 4), ("a/b", 11), ("é", 12), ("50%", 13), ("k=v:w", 14)]
LAYOUTS = [(2, "copy-on-write"), (2, "merge-on-read"), (3, "copy-on-write"), (3, "merge-on-read")]


@pytest.mark.parametrize(("version", "mode"), LAYOUTS)
def test_row_changes_on_a_file_uri_table_with_escaped_partition_folders(
    tmp_path: Path, version: int, mode: str
) -> None:
    con = iceduck.connect(tmp_path / "wh")
    con.execute("CREATE NAMESPACE db")
    con.execute(
        f"CREATE TABLE db.t (s string, k int, ts timestamp_ntz) USING iceberg PARTITIONED BY (s, ts) "
        f"LOCATION 'file:{tmp_path}/loc/t' TBLPROPERTIES ('format-version'='{version}', "
        f"'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )
    values = ", ".join(f"('{s}', {k}, TIMESTAMP '2024-01-01 10:00:00')" for s, k in ROWS)
    con.execute(f"INSERT INTO db.t VALUES {values}")
    paths = [p for (p,) in con.execute("SELECT file_path FROM db.t.data_files").fetchall()]
    assert any("s=a%2Fb/ts=2024-01-01T10%3A00" in p for p in paths), paths
    assert all(p.startswith("file:") and Path(p.removeprefix("file:")).is_file() for p in paths)

    con.execute("DELETE FROM db.t WHERE k IN (1, 2, 3)")  # one row of files holding two
    con.execute("UPDATE db.t SET k = -k WHERE s = '50%'")
    con.execute(
        "MERGE INTO db.t USING (SELECT 'é' AS s, 12 AS k) src ON t.k = src.k "
        "WHEN MATCHED THEN UPDATE SET k = 120"
    )
    got = sorted(con.execute("SELECT s, k FROM db.t").fetchall())
    assert got == sorted([("a/b", 11), ("é", 120), ("50%", -13), ("x y", 4), ("k=v:w", 14)])
    for (path,) in con.execute("SELECT file_path FROM db.t.all_files").fetchall():
        assert Path(path.removeprefix("file:")).is_file(), path
    con.execute("DROP TABLE db.t PURGE")
    assert not [p for p in (tmp_path / "loc").rglob("*") if p.is_file()]  # purge found every file

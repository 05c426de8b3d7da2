"""``CALL system.rewrite_manifests``: manifests clustered by partition, rows, row ids,
sequence numbers and snapshot ids unchanged, fewer manifests read by a point query."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import iceduck
from iceduck.catalog.base import TableIdentifier
from iceduck.catalog.sqlite import SqliteCatalog
from iceduck.connection import Connection
from iceduck.errors import ValidationError
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.txn.manifest_rewrite import commit_manifest_rewrite
from tests.support.faults import add_equality_deletes

#: small enough that the rewrite makes several manifests out of a few kilobytes
TARGET = 20000


def build(con: Connection, version: int, *, evolve: bool = False) -> None:
    """Late-arriving appends: every commit writes partitions p..p+12, so the manifests'
    partition ranges overlap; then deletes (position deletes on v2, DVs on v3). Merging on
    commit is off, as for a table written by fast appends (Spark's streaming writes)."""
    con.execute("CREATE NAMESPACE IF NOT EXISTS db")
    con.execute(
        "CREATE TABLE db.t (id bigint, p int, s string) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version' = '{version}', 'write.delete.mode' = 'merge-on-read', "
        f"'commit.manifest.target-size-bytes' = '{TARGET}', 'commit.manifest-merge.enabled' = 'false')"
    )
    for batch in range(10):
        con.execute(
            "INSERT INTO db.t SELECT ? * 100 + i, ? + i % 13, 's' || i FROM range(26) r(i)", [batch, batch]
        )
    if evolve:
        con.execute("ALTER TABLE db.t ADD COLUMN extra double")
        con.execute("INSERT INTO db.t VALUES (5000, 3, 'late', 1.5)")
    con.execute("DELETE FROM db.t WHERE id % 7 = 0")
    con.execute("DELETE FROM db.t WHERE id = 101")


@pytest.fixture
def con(tmp_path: Path) -> Iterator[Connection]:
    con = iceduck.connect(tmp_path / "wh")
    yield con
    con.close()


def rows(con: Connection) -> list[tuple[object, ...]]:
    return con.execute("SELECT * FROM db.t ORDER BY id").fetchall()


def manifests_read(con: Connection, where: str) -> tuple[int, int]:
    plan = "\n".join(str(r[0]) for r in con.execute(f"EXPLAIN SELECT * FROM db.t WHERE {where}").fetchall())
    found = re.search(r"manifests: (\d+) total, (\d+) read", plan)
    assert found, plan
    return int(found.group(1)), int(found.group(2))


def entries(con: Connection) -> list[tuple[object, ...]]:
    """Every live file with what it must keep: the snapshot that added it, its sequence
    numbers (and row id on v3)."""
    return sorted(
        con.execute(
            "SELECT data_file.file_path, snapshot_id, sequence_number, file_sequence_number, "
            "data_file.content FROM db.t.entries WHERE status < 2"
        ).fetchall()
    )


def files_on_disk(root: Path) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


@pytest.mark.parametrize("version", [2, 3])
def test_clusters_by_partition_and_keeps_everything(con: Connection, tmp_path: Path, version: int) -> None:
    build(con, version)
    before_rows = rows(con)
    before_entries = entries(con)
    before_ids = con.execute("SELECT id, _row_id FROM db.t ORDER BY id").fetchall() if version == 3 else []
    total, read_before = manifests_read(con, "p = 4")
    on_disk = files_on_disk(tmp_path / "wh")
    manifests_before = con.execute(
        "SELECT count(*), sum(added_data_files_count + existing_data_files_count) "
        "FROM db.t.manifests WHERE content = 0"
    ).fetchone()

    cur = con.execute("CALL system.rewrite_manifests('db.t')")
    assert [(d[0], d[1]) for d in cur.description] == [
        ("rewritten_manifests_count", "INTEGER"),
        ("added_manifests_count", "INTEGER"),
    ]
    rewritten, added = cur.fetchone()
    data_after = con.execute(
        "SELECT count(*), sum(added_data_files_count + existing_data_files_count), "
        "sum(added_data_files_count) FROM db.t.manifests WHERE content = 0"
    ).fetchone()
    assert data_after[1] == manifests_before[1]  # every live data file listed once again
    assert data_after[2] == 0  # ... as EXISTING
    assert rewritten > added >= 2

    assert rows(con) == before_rows
    assert entries(con) == before_entries
    if version == 3:
        assert con.execute("SELECT id, _row_id FROM db.t ORDER BY id").fetchall() == before_ids
    total_after, read_after = manifests_read(con, "p = 4")
    assert read_after < read_before, (total, read_before, total_after, read_after)
    # nothing was deleted: the old manifests stay with the older snapshots
    assert on_disk <= files_on_disk(tmp_path / "wh")

    op, summary = con.execute(
        "SELECT operation, summary FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).fetchone()
    summary = dict(summary)
    assert op == "replace"
    assert summary["manifests-replaced"] == str(rewritten)
    assert summary["manifests-created"] == str(added)
    assert summary["manifests-kept"] == "0"
    assert summary["entries-processed"] == "0"  # as Spark's procedure writes it
    assert summary["total-records"] == "260"
    # a point query still finds its rows; time travel to before the rewrite still works
    assert con.execute("SELECT count(*) FROM db.t WHERE p = 4").fetchone()[0] == sum(
        1 for r in before_rows if r[1] == 4
    )


def test_manifests_are_narrow_after_the_rewrite(con: Connection) -> None:
    build(con, 2)
    con.execute("CALL system.rewrite_manifests('db.t')")
    ranges = sorted(
        (int(lo), int(hi))
        for lo, hi in con.execute(
            "SELECT partition_summaries[1].lower_bound, partition_summaries[1].upper_bound "
            "FROM db.t.manifests WHERE content = 0"
        ).fetchall()
    )
    lows = [lo for lo, _ in ranges]
    highs = [hi for _, hi in ranges]
    # consecutive runs of the sorted partitions: each starts where the previous ended
    assert all(lows[i + 1] >= highs[i] for i in range(len(ranges) - 1)), ranges


def test_a_second_rewrite_and_writes_after_it(con: Connection) -> None:
    build(con, 3, evolve=True)
    con.execute("CALL system.rewrite_manifests('db.t')")
    con.execute("INSERT INTO db.t VALUES (9000, 2, 'after', NULL)")
    con.execute("DELETE FROM db.t WHERE p = 3")
    expected = rows(con)
    con.execute("CALL system.rewrite_manifests(table => 'db.t', use_caching => false)")
    assert rows(con) == expected
    assert con.execute("SELECT count(*) FROM db.t WHERE id = 9000").fetchone()[0] == 1


@pytest.mark.parametrize("version", [2, 3])
def test_equality_deletes_keep_applying_by_sequence_number(con: Connection, version: int) -> None:
    """An equality delete applies to data files of lower data sequence numbers only: rows
    re-inserted after it stay, rows before it stay deleted, after the rewrite too."""
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.u (id bigint, s string) USING iceberg "
        f"TBLPROPERTIES ('format-version' = '{version}', 'commit.manifest-merge.enabled' = 'false')"
    )
    for batch in range(3):
        con.execute("INSERT INTO db.u SELECT ? * 10 + i, 'old' FROM range(10) r(i)", [batch])
    add_equality_deletes(con, "db", "u", "id", [1, 12])
    add_equality_deletes(con, "db", "u", "id", [25])
    con.execute("INSERT INTO db.u VALUES (12, 'again')")
    expected = con.execute("SELECT * FROM db.u ORDER BY id, s").fetchall()
    assert (12, "again") in expected and (12, "old") not in expected and len(expected) == 28
    # four data manifests become one, two delete manifests one
    assert con.execute("CALL system.rewrite_manifests('db.u')").fetchall() == [(6, 2)]
    assert con.execute("SELECT * FROM db.u ORDER BY id, s").fetchall() == expected


def test_a_v1_table(con: Connection) -> None:
    """v1 manifests have no sequence numbers: the rewrite lists the entries again as v1."""
    con.execute("CREATE NAMESPACE db")
    con.execute(
        "CREATE TABLE db.t (id bigint, p int) USING iceberg PARTITIONED BY (p) "
        "TBLPROPERTIES ('format-version' = '1', 'commit.manifest-merge.enabled' = 'false')"
    )
    for batch in range(4):
        con.execute("INSERT INTO db.t SELECT ? * 10 + i, ? + i % 3 FROM range(9) r(i)", [batch, batch])
    con.execute("DELETE FROM db.t WHERE id = 4")  # copy-on-write on v1
    expected, before = rows(con), entries(con)
    assert con.execute("CALL system.rewrite_manifests('db.t')").fetchall() == [(5, 1)]
    assert rows(con) == expected
    assert entries(con) == before


def test_nothing_to_rewrite(con: Connection) -> None:
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint)")
    assert con.execute("CALL system.rewrite_manifests('db.t')").fetchall() == [(0, 0)]
    con.execute("INSERT INTO db.t VALUES (1)")
    snapshots = con.execute("SELECT count(*) FROM db.t.snapshots").fetchone()
    assert con.execute("CALL system.rewrite_manifests('db.t')").fetchall() == [(0, 0)]
    assert con.execute("SELECT count(*) FROM db.t.snapshots").fetchone() == snapshots


def test_an_older_spec(con: Connection) -> None:
    build(con, 2)
    con.execute("ALTER TABLE db.t ADD PARTITION FIELD bucket(4, id)")
    con.execute("INSERT INTO db.t VALUES (7001, 1, 'new spec')")
    con.execute("INSERT INTO db.t VALUES (7002, 2, 'new spec')")
    expected = rows(con)
    # the current spec (1) has two one-file manifests: they become one
    assert con.execute("CALL system.rewrite_manifests('db.t')").fetchall() == [(2, 1)]
    rewritten, added = con.execute("CALL system.rewrite_manifests('db.t', false, 0)").fetchone()
    assert rewritten > added >= 1
    assert rows(con) == expected


def test_a_concurrent_append_is_kept(con: Connection, tmp_path: Path) -> None:
    """The rewrite built on a stale base retries on the new one and lists the appended
    manifest next to its own (manifests-kept)."""
    build(con, 3)
    with SqliteCatalog(tmp_path / "wh") as catalog:
        stale = catalog.load_table(TableIdentifier(("db",), "t"))
        con.execute("INSERT INTO db.t VALUES (8000, 30, 'concurrent')")
        expected = rows(con)
        rewrite = commit_manifest_rewrite(catalog, stale, ManifestCache(), None)
    assert rewrite.added
    assert rows(con) == expected
    op, summary = con.execute(
        "SELECT operation, summary FROM db.t.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).fetchone()
    assert op == "replace"
    assert dict(summary)["manifests-kept"] == "1"


def test_a_concurrent_rewrite_wins_and_nothing_is_left_behind(con: Connection, tmp_path: Path) -> None:
    build(con, 2)
    with SqliteCatalog(tmp_path / "wh") as catalog:
        stale = catalog.load_table(TableIdentifier(("db",), "t"))
        con.execute("CALL system.rewrite_manifests('db.t')")
        on_disk = files_on_disk(tmp_path / "wh")
        snapshots = con.execute("SELECT count(*) FROM db.t.snapshots").fetchone()
        with pytest.raises(ValidationError, match="is no longer in the current snapshot"):
            commit_manifest_rewrite(catalog, stale, ManifestCache(), None)
    assert files_on_disk(tmp_path / "wh") == on_disk  # its manifests and lists were deleted
    assert con.execute("SELECT count(*) FROM db.t.snapshots").fetchone() == snapshots


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("CALL system.rewrite_manifests('db.t', false, 7)", "has no partition spec with id 7"),
        ("CALL system.rewrite_manifests('db.nope')", "db.nope"),
        ("CALL system.rewrite_manifests(spec_id => 0)", "missing required parameters: table"),
    ],
)
def test_errors(con: Connection, call: str, says: str) -> None:
    con.execute("CREATE NAMESPACE db")
    con.execute("CREATE TABLE db.t (id bigint)")
    with pytest.raises(iceduck.ProgrammingError) as raised:
        con.execute(call)
    assert says in str(raised.value)

"""Every Iceberg Spark runtime since 1.4 writes a table history; iceduck reads every
snapshot as that Spark reads it, writes to the table, and the same runtime reads iceduck's
commits back as iceduck does.

The runtimes come from Maven Central (:mod:`tests.support.maven`: the last patch of each
minor release), each in a Spark of its own (:class:`tests.support.spark_peer.SparkPeer`),
started once per runtime. Each writes one table per format version it can write (v1 and
v2; v3 from 1.8 on) through the same history: appends, merge-on-read DELETE and UPDATE
(position deletes in v2, deletion vectors in v3; copy-on-write in v1), added and renamed
columns, a partition field added, a tag, a branch written to, MERGE, compaction
(``rewrite_data_files``), a copy-on-write DELETE and ``expire_snapshots``.

Without Maven the module is skipped, naming what is missing; ``ICEDUCK_REQUIRE_MAVEN=1``
(set by ``.ci/run``) makes that a failure. ``-m 'not old_runtimes'`` leaves it out locally.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import iceduck
from tests.support import maven
from tests.support.scenario_rows import assert_same, iceduck_rows
from tests.support.spark_peer import CATALOG, SparkPeer, iceberg_hadoop_catalog

pytestmark = [pytest.mark.spark, pytest.mark.old_runtimes]

NS = "db"


def _version(runtime: str) -> tuple[int, ...]:
    return tuple(int(p) for p in runtime.split("."))


def format_versions(runtime: str) -> list[int]:
    """What the runtime writes: v3 (deletion vectors) from 1.8 on."""
    return [1, 2, 3] if _version(runtime) >= (1, 8) else [1, 2]


def _rows(first: int, last: int, note: bool, data: str = "data") -> str:
    """Spark SQL producing rows ``first..last`` of the history's table (``data``: the name of
    the second column, ``label`` after the rename)."""
    columns = [
        "id",
        f"concat('d', CAST(id AS string)) AS {data}",
        "element_at(array('a', 'b', 'c'), CAST(id % 3 AS int) + 1) AS category",
        "TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id AS int), 0, 0, 0) AS ts",
        "CAST(id * 1.25 AS decimal(10, 2)) AS amount",
    ]
    if note:
        columns.append("concat('n', CAST(id AS string)) AS note")
    return f"SELECT {', '.join(columns)} FROM range({first}, {last + 1})"


def history(table: str, version: int) -> list[str]:
    """The Spark statements that write ``table`` (``old.db.<name>``) at ``version``."""
    name = table.split(".", 1)[1]
    mor = (
        ", 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', "
        "'write.merge.mode' = 'merge-on-read'"
        if version > 1
        else ""
    )
    return [
        f"CREATE TABLE {table} (id bigint, data string, category string, ts timestamp, "
        f"amount decimal(10, 2)) USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version' = '{version}'{mor})",
        f"INSERT INTO {table} {_rows(1, 10, note=False)}",
        f"INSERT INTO {table} {_rows(11, 20, note=False)}",
        f"DELETE FROM {table} WHERE id % 5 = 0",
        f"UPDATE {table} SET data = concat(data, '!') WHERE id < 4",
        f"ALTER TABLE {table} ADD COLUMN note string",
        f"INSERT INTO {table} {_rows(21, 25, note=True)}",
        f"ALTER TABLE {table} RENAME COLUMN data TO label",
        f"ALTER TABLE {table} ADD PARTITION FIELD bucket(4, id)",
        f"INSERT INTO {table} {_rows(26, 30, note=True)}",
        f"ALTER TABLE {table} CREATE TAG t1",
        f"ALTER TABLE {table} CREATE BRANCH b1",
        f"INSERT INTO {table}.branch_b1 {_rows(31, 33, note=True)}",
        f"MERGE INTO {table} t USING ({_rows(28, 35, note=True, data='label')}) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.label = concat(s.label, '*') "
        "WHEN NOT MATCHED THEN INSERT *",
        f"CALL {CATALOG}.system.rewrite_data_files(table => '{name}', "
        "options => map('min-input-files', '2'))",
        f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode' = 'copy-on-write')",
        f"DELETE FROM {table} WHERE id = 7",
        f"CALL {CATALOG}.system.expire_snapshots(table => '{name}', "
        "older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 8)",
    ]


@dataclass
class Written:
    runtime: str
    peer: SparkPeer
    warehouse: Path
    #: iceduck's name of each table (``db.h_v2``) by format version
    tables: dict[int, str]

    def connect(self) -> iceduck.Connection:
        return iceduck.connect(self.warehouse, catalog_type="hadoop")

    def spark_name(self, table: str) -> str:
        return f"{CATALOG}.{table}"


def _runtime_jar(runtime: str) -> Path:
    try:
        return maven.iceberg_runtime(runtime)
    except maven.MavenUnavailable as e:
        if os.environ.get("ICEDUCK_REQUIRE_MAVEN"):
            raise
        pytest.skip(f"Iceberg {runtime} runtime: {e}")


@pytest.fixture(scope="module", params=maven.ICEBERG_RUNTIMES)
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Written]:
    """A Spark with runtime ``request.param`` and the table histories it wrote."""
    runtime: str = request.param
    jar = _runtime_jar(runtime)
    root = tmp_path_factory.mktemp(f"runtime-{runtime}")
    warehouse = root / "warehouse"
    warehouse.mkdir()
    peer = SparkPeer([jar], iceberg_hadoop_catalog(warehouse), root / "scratch")
    try:
        tables = {}
        for version in format_versions(runtime):
            table = f"{NS}.h_v{version}"
            for statement in history(f"{CATALOG}.{table}", version):
                peer.sql(statement)
            tables[version] = table
        yield Written(runtime, peer, warehouse, tables)
    finally:
        peer.close()
        shutil.rmtree(root, ignore_errors=True)


def _same(written: Written, what: str, iceduck_sql: str, spark_sql: str) -> None:
    with written.connect() as con:
        got = iceduck_rows(con, iceduck_sql)
    assert_same(f"Iceberg {written.runtime}, {what}", got, written.peer.rows(spark_sql))


def _snapshot_ids(written: Written, table: str) -> list[int]:
    rows = written.peer.collect(f"SELECT snapshot_id FROM {written.spark_name(table)}.snapshots")
    return [int(r[0]) for r in rows]


def test_every_snapshot_reads_as_spark_reads_it(written: Written) -> None:
    for version, table in written.tables.items():
        snapshots = _snapshot_ids(written, table)
        assert len(snapshots) >= 8, (version, snapshots)
        for snapshot in snapshots:
            _same(
                written,
                f"v{version} snapshot {snapshot}",
                f"SELECT * FROM {table} VERSION AS OF {snapshot}",
                f"SELECT * FROM {written.spark_name(table)} VERSION AS OF {snapshot}",
            )


def test_tags_branches_and_metadata_tables_read_as_spark_reads_them(written: Written) -> None:
    for version, table in written.tables.items():
        spark = written.spark_name(table)
        for what, mine, theirs in [
            ("current", f"SELECT * FROM {table}", f"SELECT * FROM {spark}"),
            (
                "tag t1",
                f"SELECT * FROM {table} VERSION AS OF 't1'",
                f"SELECT * FROM {spark} VERSION AS OF 't1'",
            ),
            ("branch b1", f"SELECT * FROM {table}.branch_b1", f"SELECT * FROM {spark}.branch_b1"),
            (
                "snapshots",
                f"SELECT snapshot_id, parent_id, operation FROM {table}.snapshots",
                f"SELECT snapshot_id, parent_id, operation FROM {spark}.snapshots",
            ),
            (
                "refs",
                f"SELECT name, type, snapshot_id FROM {table}.refs",
                f"SELECT name, type, snapshot_id FROM {spark}.refs",
            ),
            (
                "files",
                f"SELECT content, file_path, record_count FROM {table}.files",
                f"SELECT content, file_path, record_count FROM {spark}.files",
            ),
            (
                "history",
                f"SELECT snapshot_id, parent_id, is_current_ancestor FROM {table}.history",
                f"SELECT snapshot_id, parent_id, is_current_ancestor FROM {spark}.history",
            ),
        ]:
            _same(written, f"v{version} {what}", mine, theirs)


def test_iceduck_writes_and_the_runtime_reads_them_back(written: Written) -> None:
    """iceduck's INSERT, DELETE, UPDATE, MERGE, ALTER and compaction on the old writer's
    table; the runtime reads every snapshot iceduck added as iceduck does, and writes after
    them (so its next commit builds on iceduck's metadata)."""
    for version, table in written.tables.items():
        before = set(_snapshot_ids(written, table))
        with written.connect() as con:
            for statement in [
                f"INSERT INTO {table} VALUES (100, 'x', 'a', TIMESTAMP '2024-03-01 00:00:00', 1.50, 'n')",
                f"DELETE FROM {table} WHERE id IN (1, 12)",
                f"UPDATE {table} SET label = 'u', amount = amount + 1 WHERE id % 4 = 1",
                f"MERGE INTO {table} t USING (SELECT * FROM (VALUES (2, 'm'), (200, 'new')) v(id, label)) s "
                "ON t.id = s.id WHEN MATCHED THEN UPDATE SET label = s.label "
                "WHEN NOT MATCHED THEN INSERT (id, label, category) VALUES (s.id, s.label, 'c')",
                f"ALTER TABLE {table} ADD COLUMN extra int",
                f"INSERT INTO {table} (id, label, category, extra) VALUES (300, 'e', 'b', 3)",
                f"CALL system.rewrite_data_files('{table}')",
            ]:
                con.execute(statement)
        added = [s for s in _snapshot_ids(written, table) if s not in before]
        assert len(added) >= 5, added
        spark = written.spark_name(table)
        for snapshot in added:
            _same(
                written,
                f"v{version} iceduck's snapshot {snapshot}",
                f"SELECT * FROM {table} VERSION AS OF {snapshot}",
                f"SELECT * FROM {spark} VERSION AS OF {snapshot}",
            )
        written.peer.sql(
            f"INSERT INTO {spark} VALUES (400, 's', 'a', TIMESTAMP '2024-04-01 00:00:00', 4.00, 'n', 4)"
        )
        written.peer.sql(f"DELETE FROM {spark} WHERE id = 300")
        _same(
            written, f"v{version} after Spark wrote again", f"SELECT * FROM {table}", f"SELECT * FROM {spark}"
        )

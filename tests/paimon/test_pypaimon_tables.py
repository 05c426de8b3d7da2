"""iceduck's reads of pypaimon-written Paimon tables against pypaimon's own reads of them.

Every table of ``tests/support/paimon_writer.py`` is read through the SQL surface users have
(``iceduck.connect(..., paimon=<warehouse>)`` names ``paimon.db.<table>``; ``ATTACH ... (TYPE
paimon)``; ``paimon_scan('<table folder>')``) at its latest snapshot, at every snapshot id and tag
(``VERSION AS OF``), and with filters, and compared with what pypaimon's reader returned, as
multisets of rows with the column names in order. Values are normalised by
``tests/support/scenario_rows.arrow_rows`` only where the two sides genuinely differ in
representation: a ``TIMESTAMP WITH LOCAL TIME ZONE`` comes from pypaimon as UTC and from DuckDB
in the session's zone (both compared as UTC epoch microseconds), numbers compare by value (DuckDB
may widen an aggregate), structs by field values.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.errors import IceduckError
from tests.support.paimon import TABLES, Expected, PaimonWarehouse, table_rows
from tests.support.scenario_rows import Rows, assert_same


@pytest.fixture(scope="module")
def con(
    paimon_warehouse: PaimonWarehouse, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[iceduck.Connection]:
    """An Iceberg warehouse of its own, with the Paimon warehouse attached as ``paimon``."""
    with iceduck.connect(str(tmp_path_factory.mktemp("iceberg")), paimon=str(paimon_warehouse.path)) as con:
        yield con


def expected_rows(read: Expected | Path) -> Rows:
    return table_rows(pq.read_table(read.file if isinstance(read, Expected) else read))


def iceduck_rows(con: iceduck.Connection, sql: str) -> Rows:
    return table_rows(con.cursor().execute(sql).fetch_arrow_table())


def time_travel(read: Expected) -> str:
    if read.snapshot is not None:
        return f" VERSION AS OF {read.snapshot}"
    if read.tag is not None:
        return f" VERSION AS OF '{read.tag}'"
    return ""


def check_reads(con: iceduck.Connection, source: str, reads: list[Expected]) -> None:
    """Every read of ``reads`` through ``SELECT * FROM <source> [VERSION AS OF] [WHERE]``; all mismatches."""
    assert reads, f"no expected reads for {source}"
    failures = []
    for read in reads:
        sql = f"SELECT * FROM {source}{time_travel(read)}" + (f" WHERE {read.where}" if read.where else "")
        try:
            assert_same(sql, iceduck_rows(con, sql), expected_rows(read))
        except AssertionError as e:
            failures.append(str(e))
        except IceduckError as e:
            failures.append(f"{sql}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("table", TABLES)
def test_latest_snapshot(con: iceduck.Connection, paimon_warehouse: PaimonWarehouse, table: str) -> None:
    check_reads(con, f"paimon.db.{table}", [paimon_warehouse.current(table)])


@pytest.mark.parametrize("table", TABLES)
def test_every_snapshot_and_tag(
    con: iceduck.Connection, paimon_warehouse: PaimonWarehouse, table: str
) -> None:
    reads = [e for e in paimon_warehouse.reads(table) if e.snapshot is not None or e.tag is not None]
    check_reads(con, f"paimon.db.{table}", reads)


@pytest.mark.parametrize("table", TABLES)
def test_filters(con: iceduck.Connection, paimon_warehouse: PaimonWarehouse, table: str) -> None:
    """Key equality, IN, value ranges, partition filters, IS NULL: pruning must never lose a row."""
    check_reads(con, f"paimon.db.{table}", [e for e in paimon_warehouse.reads(table) if e.where])


@pytest.mark.parametrize("table", ["append_part", "pk", "pk_part", "evolved"])
def test_paimon_scan_of_a_table_folder(
    con: iceduck.Connection, paimon_warehouse: PaimonWarehouse, table: str
) -> None:
    folder = str(paimon_warehouse.table_path(table)).replace("'", "''")
    reads = [e for e in paimon_warehouse.reads(table) if e.tag is None and e.snapshot is None]
    check_reads(con, f"paimon_scan('{folder}')", reads)


def test_attach_and_detach(paimon_warehouse: PaimonWarehouse, tmp_path: Path) -> None:
    with iceduck.connect(str(tmp_path)) as con:
        con.execute(f"ATTACH '{paimon_warehouse.path}' AS p (TYPE paimon)")
        check_reads(con, "p.db.pk", [paimon_warehouse.current("pk"), *paimon_warehouse.reads("pk")[:2]])
        check_reads(con, "p.db.pk_part", [paimon_warehouse.current("pk_part")])
        con.execute("DETACH p")
        with pytest.raises(IceduckError):
            con.execute("SELECT * FROM p.db.pk").fetchall()


def test_projections_and_aggregates(con: iceduck.Connection, paimon_warehouse: PaimonWarehouse) -> None:
    """Some columns only (in another order), and aggregates over the merged rows."""
    pk = pq.read_table(paimon_warehouse.current("pk").file)
    got = iceduck_rows(con, "SELECT v, id FROM paimon.db.pk WHERE n > 0")
    assert_same("SELECT v, id", got, table_rows(pk.filter(pc.field("n") > 0).select(["v", "id"])))
    count, total, top = con.execute("SELECT count(*), sum(amount), max(ts) FROM paimon.db.pk").fetchone()
    assert count == pk.num_rows
    assert Decimal(total) == sum(v for v in pk.column("amount").to_pylist() if v is not None)
    assert top == pc.max(pk.column("ts")).as_py()
    part = pq.read_table(paimon_warehouse.current("pk_part").file)
    got = iceduck_rows(con, "SELECT dt, count(*) AS n FROM paimon.db.pk_part GROUP BY dt")
    counts = part.group_by("dt").aggregate([("id", "count")]).rename_columns(["dt", "n"])
    assert_same("GROUP BY dt", got, table_rows(counts))


def test_join_with_an_iceberg_table(con: iceduck.Connection, paimon_warehouse: PaimonWarehouse) -> None:
    """A Paimon table joined with an Iceberg one in the same statement."""
    con.execute("CREATE NAMESPACE IF NOT EXISTS ice")
    con.execute("CREATE TABLE ice.wanted (id bigint, label string)")
    con.execute(
        "INSERT INTO ice.wanted VALUES (0, 'zero'), (150, 'x'), (299, 'y'), (400, 'z'), (100000, 'none')"
    )
    got = iceduck_rows(con, "SELECT w.label, p.id, p.v FROM paimon.db.pk p JOIN ice.wanted w ON p.id = w.id")
    pk = pq.read_table(paimon_warehouse.current("pk").file)
    wanted = pa.table(
        {"label": ["zero", "x", "y", "z", "none"], "id": pa.array([0, 150, 299, 400, 100000], pa.int64())}
    )
    joined = wanted.join(pk.select(["id", "v"]), "id", join_type="inner").select(["label", "id", "v"])
    assert joined.num_rows > 0
    assert_same("JOIN ice.wanted", got, table_rows(joined))


#: the columns of Paimon's system tables compared with pypaimon's (commit times and users are
#: left out: pypaimon renders them in its own zone and both come from the same JSON fields)
SYSTEM_COLUMNS = {
    "snapshots": [
        "snapshot_id",
        "schema_id",
        "commit_kind",
        "base_manifest_list",
        "delta_manifest_list",
        "total_record_count",
        "delta_record_count",
    ],
    "files": ["file_path", "bucket", "schema_id", "level", "record_count", "file_size_in_bytes"],
    "manifests": ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id"],
    "tags": ["tag_name", "snapshot_id", "schema_id", "record_count"],
    "schemas": ["schema_id"],
    "options": ["key", "value"],
    "partitions": ["partition", "record_count", "file_size_in_bytes", "file_count"],
    "buckets": ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count"],
}


@pytest.mark.parametrize("system", SYSTEM_COLUMNS)
@pytest.mark.parametrize("table", ["append_part", "pk", "pk_part", "append_dv", "evolved"])
def test_system_tables(
    con: iceduck.Connection, paimon_warehouse: PaimonWarehouse, table: str, system: str
) -> None:
    columns = SYSTEM_COLUMNS[system]
    expected = pq.read_table(paimon_warehouse.system(table, system).file).select(columns)
    if "partition" in columns:  # pypaimon writes a null partition value as "None" or "__NULL__"
        names = [
            None if p is None else re.sub(r"=(None|__NULL__)(?=/|$)", "=__DEFAULT_PARTITION__", p)
            for p in expected.column("partition").to_pylist()
        ]
        expected = expected.set_column(columns.index("partition"), "partition", pa.array(names, pa.string()))
    select = ", ".join(columns)
    for name in (f"paimon.db.{table}.{system}", f'paimon.db."{table}${system}"'):
        cur = con.cursor().execute(f"SELECT {select} FROM {name}")
        got = cur.fetch_arrow_table()
        assert_same(name, table_rows(file_names(got)), table_rows(file_names(expected)))


def file_names(table: pa.Table) -> pa.Table:
    """``file_path`` as the file's name: pypaimon's ``$files`` lists names, Java's full paths."""
    if "file_path" not in table.column_names:
        return table
    names = [None if p is None else p.rsplit("/", 1)[-1] for p in table.column("file_path").to_pylist()]
    return table.set_column(table.column_names.index("file_path"), "file_path", pa.array(names, pa.string()))


def explain(con: iceduck.Connection, sql: str) -> str:
    return "\n".join(str(r[0]) for r in con.execute("EXPLAIN " + sql).fetchall())


def files_read(text: str) -> int:
    found = re.search(r"data files: (\d+) read", text)
    assert found, text
    return int(found.group(1))


def test_explain_shows_partition_pruning(con: iceduck.Connection, paimon_warehouse: PaimonWarehouse) -> None:
    """``dt = '2024-01-04'`` reads exactly that day's files (all live: only 2024-01-01 was overwritten)."""
    day = paimon_warehouse.table_path("append_part") / "dt=2024-01-04"
    text = explain(con, "SELECT * FROM paimon.db.append_part WHERE dt = '2024-01-04'")
    assert files_read(text) == len(list(day.glob("*/bucket-*/*.parquet"))) > 0, text
    everything = explain(con, "SELECT * FROM paimon.db.append_part")
    assert files_read(everything) > files_read(text), everything

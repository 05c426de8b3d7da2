"""The pypaimon-written warehouse holds what the comparison tests rely on.

Checked from the files themselves (Avro manifests through iceduck's Avro decoder, which is not
the code under test here; Parquet through pyarrow), so a pypaimon upgrade that stops writing a
DELETE entry, a deletion vector, a tag or a schema change fails here, not as a silent pass.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

from iceduck.formats.avro_files import read_avro
from tests.support.paimon import PaimonWarehouse, load_warehouse, write_warehouse

TABLES = ("append_part", "pk", "pk_part", "pk_dv", "evolved", "append_dv", "partial", "agg", "first")


def avro_records(path: Path) -> list[dict]:
    return read_avro(path.read_bytes(), str(path)).records


def manifests(table: Path, prefix: str) -> list[Path]:
    return sorted(p for p in (table / "manifest").iterdir() if p.name.startswith(prefix))


def test_every_table_has_snapshots_schemas_and_expected_reads(paimon_warehouse: PaimonWarehouse) -> None:
    for name in TABLES:
        table = paimon_warehouse.table_path(name)
        assert (table / "schema" / "schema-0").is_file(), name
        assert (table / "snapshot" / "LATEST").is_file(), name
        latest = int((table / "snapshot" / "LATEST").read_text())
        assert latest >= 4, name
        snapshots = {e.snapshot for e in paimon_warehouse.reads(name) if e.snapshot is not None}
        assert snapshots == set(range(1, latest + 1)), name
        assert any(e.where for e in paimon_warehouse.reads(name)), name


def test_expected_rows(paimon_warehouse: PaimonWarehouse) -> None:
    """Row counts of pypaimon's reads, by table: real merges happened (fewer rows than written)."""
    current = {name: pq.read_table(paimon_warehouse.current(name).file) for name in TABLES}
    assert current["append_part"].num_rows == 3550  # 4000 appended, one day of 750 overwritten by 300
    assert 0 < current["pk"].num_rows < 6 * 150  # six commits of 150 keys, overlapping, with deletes
    assert set(current["pk"].column("rk").to_pylist()) <= {"+I", "+U"}  # deleted keys are gone
    assert len(current["pk_part"].column("dt").unique()) == 4
    # no expected read shows a -D row as live (see write_pk_part: pypaimon's raw-convertible reads)
    for name in ("pk", "pk_part", "partial", "agg"):
        for read in paimon_warehouse.reads(name):
            data = pq.read_table(read.file)
            if "rk" in data.column_names:
                assert "-D" not in data.column("rk").to_pylist(), read
    assert current["evolved"].column_names == ["id", "a", "b2", "e"]
    assert current["append_dv"].num_rows < 1000  # rows deleted through deletion vectors
    # pypaimon writes level-0 files only and never compacts; a batch scan of a table with
    # deletion vectors or the first-row engine reads levels above 0 only (Paimon's
    # batchScanSkipLevel0), so pypaimon reads these two as empty
    assert current["pk_dv"].num_rows == 0 and current["first"].num_rows == 0
    assert current["agg"].num_rows == current["partial"].num_rows > 0


def test_overwrite_left_delete_entries(paimon_warehouse: PaimonWarehouse) -> None:
    """The INSERT OVERWRITE of one day of ``append_part``: its manifests hold _KIND 1 (DELETE) entries."""
    table = paimon_warehouse.table_path("append_part")
    kinds = Counter(
        r["_KIND"] for m in manifests(table, "manifest-") if "list" not in m.name for r in avro_records(m)
    )
    assert kinds[1] > 0 and kinds[0] > kinds[1]


def test_append_dv_has_deletion_vectors(paimon_warehouse: PaimonWarehouse) -> None:
    table = paimon_warehouse.table_path("append_dv")
    entries = [r for m in manifests(table, "index-manifest-") for r in avro_records(m)]
    ranges = [
        d for r in entries if r["_INDEX_TYPE"] == "DELETION_VECTORS" for d in r["_DELETIONS_VECTORS_RANGES"]
    ]
    assert ranges and all(d["_CARDINALITY"] > 0 for d in ranges)
    assert not (paimon_warehouse.table_path("pk_dv") / "index").exists()  # pypaimon: no DVs for a PK table


def test_tags_and_schema_changes(paimon_warehouse: PaimonWarehouse) -> None:
    pk = paimon_warehouse.table_path("pk")
    assert sorted(p.name for p in (pk / "tag").iterdir()) == ["tag-after2", "tag-after4"]
    assert json.loads((pk / "tag" / "tag-after2").read_text())["id"] == 2
    evolved = paimon_warehouse.table_path("evolved")
    assert sorted(p.name for p in (evolved / "schema").iterdir()) == [f"schema-{i}" for i in range(5)]
    assert paimon_warehouse.notes["evolved_changes"] == [
        "add column e string",
        "rename column b to b2",
        "widen a int to bigint",
        "drop column c",
    ]
    assert (paimon_warehouse.table_path("fmt_orc") / "bucket-0").is_dir()


def test_writer_is_deterministic(paimon_warehouse: PaimonWarehouse, tmp_path: Path) -> None:
    """A second run writes the same rows (file names, commit users and times differ: UUIDs, clocks)."""
    again = write_warehouse(tmp_path / "wh")
    first = load_warehouse(paimon_warehouse.path)
    assert [(e.table, e.snapshot, e.tag, e.where) for e in first.expected] == [
        (e.table, e.snapshot, e.tag, e.where) for e in again.expected
    ]
    for a, b in zip(first.expected, again.expected, strict=True):
        if a.system is None:
            assert pq.read_table(a.file).equals(pq.read_table(b.file)), a.file

"""Corrupt, truncated or unsupported Paimon metadata: one clear iceduck error naming the file.

Each test copies one pypaimon-written table into a warehouse of its own, damages one file (or
writes into its schema what iceduck does not read), and queries it through the SQL surface
(``paimon.db.<table>`` and ``paimon_scan('<folder>')``). The error must be an iceduck error
(:mod:`iceduck.errors`: never a raw ``KeyError`` or ``json`` traceback, never wrong rows), and
its message must name the damaged file, or the unsupported thing by the name Paimon gives it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import iceduck
from iceduck.errors import CorruptDataError, IceduckError, UnsupportedError
from iceduck.formats.avro_files import read_avro
from tests.support.paimon import PaimonWarehouse, table_rows
from tests.support.scenario_rows import assert_same


@dataclass
class Copy:
    """One table of the fixture warehouse, copied to ``warehouse/db.db/<name>``."""

    warehouse: Path
    name: str

    @property
    def folder(self) -> Path:
        return self.warehouse / "db.db" / self.name

    def latest(self) -> dict:
        """The latest snapshot's JSON (read here as plain JSON, independently of iceduck)."""
        return json.loads((self.folder / "snapshot" / f"snapshot-{self.latest_id()}").read_text())

    def latest_id(self) -> int:
        return max(int(p.name.split("-")[1]) for p in (self.folder / "snapshot").glob("snapshot-*"))

    def delta_manifests(self) -> list[str]:
        path = self.folder / "manifest" / self.latest()["deltaManifestList"]
        return [r["_FILE_NAME"] for r in read_avro(path.read_bytes(), str(path)).records]

    def delta_files(self) -> list[Path]:
        """The data files the latest commit added (live: pypaimon never compacts)."""
        files = []
        for name in self.delta_manifests():
            path = self.folder / "manifest" / name
            for r in read_avro(path.read_bytes(), str(path)).records:
                if r["_KIND"] == 0:
                    files.append(self.folder / f"bucket-{r['_BUCKET']}" / r["_FILE"]["_FILE_NAME"])
        return files

    def edit_schema(self, schema_id: int, edit: dict) -> None:
        path = self.folder / "schema" / f"schema-{schema_id}"
        path.write_text(json.dumps({**json.loads(path.read_text()), **edit}))


CopyTable = Callable[[str], Copy]


@pytest.fixture
def copy(paimon_warehouse: PaimonWarehouse, tmp_path: Path) -> CopyTable:
    """A function copying one table of the fixture warehouse into ``tmp_path``."""

    def make(name: str) -> Copy:
        target = Copy(tmp_path / "wh", name)
        shutil.copytree(paimon_warehouse.table_path(name), target.folder)
        return target

    return make


def query_error(copy: Copy, tmp_path: Path) -> list[IceduckError]:
    """The errors of ``SELECT *`` through both names of the table (each must fail)."""
    errors = []
    with iceduck.connect(str(tmp_path / "iceberg"), paimon=str(copy.warehouse)) as con:
        folder = str(copy.folder).replace("'", "''")
        for source in (f"paimon.db.{copy.name}", f"paimon_scan('{folder}')"):
            with pytest.raises(IceduckError) as caught:
                con.execute(f"SELECT * FROM {source}").fetchall()
            errors.append(caught.value)
    return errors


def assert_names(errors: list[IceduckError], *needles: str, kind: type[IceduckError] = IceduckError) -> None:
    for error in errors:
        assert isinstance(error, kind), f"{type(error).__name__}: {error}"
        for needle in needles:
            assert needle in str(error), f"{needle!r} not in: {error}"


def test_truncated_manifest(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    name = table.delta_manifests()[0]
    path = table.folder / "manifest" / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert_names(query_error(table, tmp_path), name, kind=CorruptDataError)


def test_truncated_manifest_list(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("append_part")
    name = table.latest()["baseManifestList"]
    path = table.folder / "manifest" / name
    path.write_bytes(path.read_bytes()[:40])
    assert_names(query_error(table, tmp_path), name, kind=CorruptDataError)


def test_missing_manifest(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk_part")
    name = table.delta_manifests()[0]
    (table.folder / "manifest" / name).unlink()
    assert_names(query_error(table, tmp_path), name)


def test_garbage_snapshot_json(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    name = f"snapshot-{table.latest_id()}"
    (table.folder / "snapshot" / name).write_text('{"version": 3, "id": ')
    assert_names(query_error(table, tmp_path), name, kind=CorruptDataError)


def test_snapshot_json_without_its_manifest_list(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    name = f"snapshot-{table.latest_id()}"
    snapshot = table.latest()
    del snapshot["baseManifestList"]
    (table.folder / "snapshot" / name).write_text(json.dumps(snapshot))
    assert_names(query_error(table, tmp_path), name, kind=CorruptDataError)


def test_deleted_data_file(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    victim = table.delta_files()[0]
    victim.unlink()
    assert_names(query_error(table, tmp_path), victim.name)


def test_garbage_data_file(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    victim = table.delta_files()[-1]
    victim.write_bytes(b"PAR1 this is not a parquet file PAR1")
    assert_names(query_error(table, tmp_path), victim.name)


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_garbage_and_missing_orc_and_avro_data_files(copy: CopyTable, tmp_path: Path, fmt: str) -> None:
    """ORC and Avro data files are read through Arrow: a broken one is still named."""
    table = copy(f"pk_{fmt}")
    victim = table.delta_files()[-1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    assert_names(query_error(table, tmp_path), victim.name, kind=CorruptDataError)
    victim.unlink()
    assert_names(query_error(table, tmp_path), victim.name)


def test_truncated_deletion_vector_index(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("append_dv")
    for index in (table.folder / "index").iterdir():
        index.write_bytes(index.read_bytes()[:6])
    errors = query_error(table, tmp_path)
    live = {p.name for p in (table.folder / "index").iterdir()}
    for error in errors:
        assert isinstance(error, CorruptDataError), f"{type(error).__name__}: {error}"
        assert any(name in str(error) for name in live), str(error)


def test_unknown_type_in_schema(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    schema = json.loads((table.folder / "schema" / "schema-0").read_text())
    schema["fields"][2]["type"] = "GEOMETRY(4326)"
    table.edit_schema(0, {"fields": schema["fields"]})
    assert_names(query_error(table, tmp_path), "schema-0", "GEOMETRY")


def test_unknown_merge_engine(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("pk")
    options = json.loads((table.folder / "schema" / "schema-0").read_text())["options"]
    table.edit_schema(0, {"options": {**options, "merge-engine": "last-writer-wins"}})
    assert_names(query_error(table, tmp_path), "merge-engine", "last-writer-wins", kind=UnsupportedError)


def test_unknown_aggregate_function(copy: CopyTable, tmp_path: Path) -> None:
    table = copy("agg")
    options = json.loads((table.folder / "schema" / "schema-0").read_text())["options"]
    table.edit_schema(0, {"options": {**options, "fields.total.aggregate-function": "theta_sketch"}})
    assert_names(query_error(table, tmp_path), "theta_sketch", kind=UnsupportedError)


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_other_file_formats(
    copy: CopyTable, paimon_warehouse: PaimonWarehouse, tmp_path: Path, fmt: str
) -> None:
    """A table pypaimon wrote in ORC or Avro: read correctly, or refused naming the format."""
    table = copy(f"fmt_{fmt}")
    with iceduck.connect(str(tmp_path / "iceberg"), paimon=str(table.warehouse)) as con:
        try:
            cur = con.cursor().execute(f"SELECT * FROM paimon.db.{table.name}")
            got = table_rows(cur.fetch_arrow_table())
        except UnsupportedError as e:
            assert fmt in str(e).lower(), str(e)
            return
    assert_same(fmt, got, table_rows(pq.read_table(paimon_warehouse.current(table.name).file)))


def test_latest_hint_ahead_of_the_snapshots(
    copy: CopyTable, paimon_warehouse: PaimonWarehouse, tmp_path: Path
) -> None:
    """A ``LATEST`` hint naming a snapshot that is not there is a hint, not an error: Paimon's
    SnapshotManager checks it against the snapshot folder, and so must iceduck."""
    table = copy("pk")
    (table.folder / "snapshot" / "LATEST").write_text("99")
    with iceduck.connect(str(tmp_path / "iceberg"), paimon=str(table.warehouse)) as con:
        got = table_rows(con.cursor().execute("SELECT * FROM paimon.db.pk").fetch_arrow_table())
    assert_same("LATEST=99", got, table_rows(pq.read_table(paimon_warehouse.current("pk").file)))

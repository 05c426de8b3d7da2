"""delete_write: v2 position-delete files and v3 deletion-vector Puffin files that
iceduck's reader applies, with Java's metrics and manifest fields."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from iceduck.engine.connection import open_database
from iceduck.engine.delete_write import write_deletion_vector_file, write_position_deletes
from iceduck.engine.write import FileTarget, write_data_files
from iceduck.errors import ValidationError
from iceduck.formats.puffin import read_deletion_vector
from iceduck.scan.tasks import DeleteFile, FileScanTask
from iceduck.spec import values
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import DataFile, FileContent, FileFormat
from iceduck.spec.partition import UNPARTITIONED
from iceduck.spec.schema import Schema
from iceduck.spec.sort import UNSORTED
from iceduck.spec.types import LongType, NestedField
from tests.engine.helpers import read_rows

SCHEMA = Schema((NestedField(1, "id", LongType(), True),))


@pytest.fixture
def con() -> Any:
    return open_database()


def _data_files(con: Any, tmp_path: Path, n: int) -> list[DataFile]:
    target = FileTarget(SCHEMA, UNPARTITIONED, UNSORTED, {}, str(tmp_path / "data"), 2)
    return [write_data_files(con, f"SELECT {k} * 100 + i FROM range(10) t(i)", target)[0] for k in range(n)]


def _task(df: DataFile, deletes: list[DeleteFile]) -> FileScanTask:
    dvs = [d for d in deletes if d.is_deletion_vector]
    return FileScanTask(
        path=df.file_path,
        file_format=FileFormat.PARQUET,
        record_count=df.record_count,
        file_size_in_bytes=df.file_size_in_bytes,
        spec_id=0,
        partition=(),
        data_sequence_number=1,
        deletion_vector=dvs[0] if dvs else None,
        position_deletes=tuple(d for d in deletes if not d.is_deletion_vector),
    )


def _delete_file(entry: DataFile) -> DeleteFile:
    return DeleteFile(
        path=entry.file_path,
        content=entry.content,
        file_format=entry.file_format,
        sequence_number=2,
        record_count=entry.record_count,
        file_size_in_bytes=entry.file_size_in_bytes,
        referenced_data_file=entry.referenced_data_file,
        content_offset=entry.content_offset,
        content_size_in_bytes=entry.content_size_in_bytes,
    )


def test_position_delete_file_is_applied_and_has_java_metrics(con: Any, tmp_path: Path):
    a, b = _data_files(con, tmp_path, 2)
    entry = write_position_deletes(
        con,
        {b.file_path: np.array([9, 0, 3]), a.file_path: [5, 5]},
        location=str(tmp_path / "data"),
        spec_id=0,
        partition=(),
        properties={},
    )
    assert entry.content is FileContent.POSITION_DELETES and entry.file_format is FileFormat.PARQUET
    assert entry.record_count == 4 and entry.referenced_data_file is None
    assert entry.file_size_in_bytes == os.path.getsize(entry.file_path)
    assert entry.file_path.endswith("-deletes.parquet")
    first, last = sorted([a.file_path, b.file_path])
    assert (
        entry.lower_bounds[2147483546] == first.encode() and entry.upper_bounds[2147483546] == last.encode()
    )
    assert values.from_bytes(LongType(), entry.upper_bounds[2147483545]) == 9
    assert entry.value_counts is None and entry.sort_order_id is None and entry.split_offsets == [4]
    rows = pq.read_table(entry.file_path).to_pylist()
    assert rows == sorted(rows, key=lambda r: (r["file_path"], r["pos"]))
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in pq.read_schema(entry.file_path)]
    assert ids == [2147483546, 2147483545]
    deletes = [_delete_file(entry)]
    got = read_rows(con, SCHEMA, [_task(a, deletes), _task(b, deletes)])
    assert sorted(r["id"] for r in got) == sorted({*range(10), *range(100, 110)} - {5, 100, 103, 109})


def test_single_file_position_deletes_reference_it(con: Any, tmp_path: Path):
    (a,) = _data_files(con, tmp_path, 1)
    entry = write_position_deletes(
        con, {a.file_path: [1]}, location=str(tmp_path / "d"), spec_id=2, partition=(7,), properties={}
    )
    assert entry.referenced_data_file == a.file_path and entry.spec_id == 2 and entry.partition == (7,)


def test_no_positions_is_refused(con: Any, tmp_path: Path):
    with pytest.raises(ValidationError):
        write_position_deletes(con, {"x": []}, location=str(tmp_path), spec_id=0, partition=(), properties={})


def test_deletion_vectors_one_blob_per_data_file(con: Any, tmp_path: Path):
    a, b = _data_files(con, tmp_path, 2)
    entries = write_deletion_vector_file(
        {a.file_path: DeletionVector([0, 1, 2]), b.file_path: DeletionVector([9])},
        location=str(tmp_path / "data"),
        partitions={a.file_path: (0, ()), b.file_path: (1, (3,))},
    )
    assert len(entries) == 2 and len({e.file_path for e in entries}) == 1
    by_ref = {e.referenced_data_file: e for e in entries}
    assert by_ref[a.file_path].record_count == 3 and by_ref[b.file_path].record_count == 1
    assert by_ref[b.file_path].spec_id == 1 and by_ref[b.file_path].partition == (3,)
    for e in entries:
        assert e.file_format is FileFormat.PUFFIN and e.content is FileContent.POSITION_DELETES
        assert e.file_path.endswith("-deletes.puffin") and e.lower_bounds is None
        dv = read_deletion_vector(
            e.file_path, e.content_offset, e.content_size_in_bytes, cardinality=e.record_count
        )
        assert len(dv) == e.record_count
    got = read_rows(
        con,
        SCHEMA,
        [_task(a, [_delete_file(by_ref[a.file_path])]), _task(b, [_delete_file(by_ref[b.file_path])])],
    )
    assert sorted(r["id"] for r in got) == [*range(3, 10), *range(100, 109)]


def test_deletion_vector_needs_the_data_files_partition(tmp_path: Path):
    with pytest.raises(ValidationError, match="no partition"):
        write_deletion_vector_file({"f": DeletionVector([1])}, location=str(tmp_path), partitions={})

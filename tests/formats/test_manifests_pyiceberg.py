"""A second opinion: PyIceberg reads what iceduck writes, and iceduck reads what PyIceberg writes.

PyIceberg's manifest writers cover v1 and v2 only; its readers handle v3 files. Tables
are not needed for this: both sides' manifest and manifest-list writers are used directly.
"""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path

import pytest

from iceduck.formats.manifest_list import read_manifest_list, write_manifest_list
from iceduck.formats.manifests import read_manifest, write_manifest
from iceduck.spec.manifest import EntryStatus, FileContent, ManifestContent
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.transforms import parse_transform
from tests.formats.manifest_helpers import SCHEMA, column_id, data_file, entry

pytest.importorskip("pyiceberg")

from pyiceberg import manifest as pim
from pyiceberg import schema as pis
from pyiceberg import types as pit
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.partitioning import PartitionField as PyPartitionField
from pyiceberg.partitioning import PartitionSpec as PyPartitionSpec
from pyiceberg.transforms import parse_transform as py_parse_transform
from pyiceberg.typedef import Record

SNAP = 8_000_000_000_000_000_008
PARTITIONING = [  # (column, transform, value of file 1, value of file 2)
    ("dt", "identity", 19723, None),
    ("l", "bucket[8]", 3, 5),
    ("dec", "identity", Decimal("-1.25"), Decimal("100.00")),
    ("s", "truncate[2]", "ab", "zz"),
    ("tstz", "day", 19000, 19001),
    ("ts", "hour", 456_000, -1),
    ("u", "identity", uuid.UUID(int=7), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
]
SPEC = PartitionSpec(
    2,
    tuple(
        PartitionField(column_id(c), 1000 + i, f"{c}_{i}", parse_transform(t))
        for i, (c, t, _, _) in enumerate(PARTITIONING)
    ),
)
FILE1 = tuple(v for _, _, v, _ in PARTITIONING)
FILE2 = tuple(v for _, _, _, v in PARTITIONING)


@pytest.mark.parametrize("format_version", [1, 2, 3])
def test_pyiceberg_reads_iceduck_manifests(tmp_path: Path, format_version: int) -> None:
    entries = [
        entry(EntryStatus.ADDED, data_file("s3://b/a.parquet", FILE1, 10)),
        entry(
            EntryStatus.EXISTING, data_file("s3://b/b.parquet", FILE2, 20), snapshot_id=3, seq=1, file_seq=1
        ),
    ]
    manifest_path = str(tmp_path / "m.avro")
    data, mf = write_manifest(
        entries, SPEC, SCHEMA, format_version, ManifestContent.DATA, SNAP, path=manifest_path
    )
    Path(manifest_path).write_bytes(data)
    list_path = tmp_path / "snap.avro"
    list_path.write_bytes(write_manifest_list([mf], format_version, SNAP, None, 4, first_row_id=0))

    io = PyArrowFileIO()
    (py_mf,) = list(pim.read_manifest_list(io.new_input(str(list_path))))
    assert py_mf.manifest_path == manifest_path
    assert py_mf.manifest_length == len(data)
    assert py_mf.partition_spec_id == 2
    assert py_mf.added_snapshot_id == SNAP
    assert (py_mf.added_files_count, py_mf.existing_files_count, py_mf.deleted_files_count) == (1, 1, 0)
    assert (py_mf.added_rows_count, py_mf.existing_rows_count) == (10, 20)
    expected_seq = 0 if format_version == 1 else 4
    assert (py_mf.sequence_number, py_mf.min_sequence_number) == (
        expected_seq,
        1 if format_version > 1 else 0,
    )
    summaries = [(s.contains_null, s.contains_nan, s.lower_bound, s.upper_bound) for s in py_mf.partitions]
    assert summaries == [
        (s.contains_null, s.contains_nan, s.lower_bound, s.upper_bound) for s in mf.partitions
    ]

    py_entries = py_mf.fetch_manifest_entry(io, discard_deleted=False)
    assert [int(e.status) for e in py_entries] == [1, 0]
    assert [e.snapshot_id for e in py_entries] == [SNAP, 3]
    assert [e.sequence_number for e in py_entries] == ([0, 0] if format_version == 1 else [4, 1])
    first = py_entries[0].data_file
    assert first.file_path == "s3://b/a.parquet"
    assert first.file_format.value == "PARQUET"
    assert first.record_count == 10
    assert dict(first.value_counts) == {1: 10, 2: 10}
    assert dict(first.lower_bounds) == {2: (-5).to_bytes(4, "little", signed=True)}
    assert first.split_offsets == [4]
    for py_e, want in zip(py_entries, (FILE1, FILE2), strict=True):
        got = [py_e.data_file.partition[i] for i in range(len(PARTITIONING))]
        assert got == list(want)


def _py_schema() -> pis.Schema:
    return pis.Schema(
        pit.NestedField(1, "l", pit.LongType(), required=False),
        pit.NestedField(2, "dt", pit.DateType(), required=False),
        pit.NestedField(3, "dec", pit.DecimalType(10, 2), required=False),
        pit.NestedField(4, "s", pit.StringType(), required=False),
        schema_id=1,
    )


def _py_spec() -> PyPartitionSpec:
    return PyPartitionSpec(
        PyPartitionField(2, 1000, py_parse_transform("identity"), "dt"),
        PyPartitionField(1, 1001, py_parse_transform("bucket[4]"), "l_bucket"),
        PyPartitionField(3, 1002, py_parse_transform("identity"), "dec"),
        PyPartitionField(4, 1003, py_parse_transform("truncate[1]"), "s_trunc"),
        spec_id=0,
    )


@pytest.mark.parametrize("format_version", [1, 2])
def test_iceduck_reads_pyiceberg_manifests(tmp_path: Path, format_version: int) -> None:
    io = PyArrowFileIO()
    manifest_path = str(tmp_path / "m.avro")
    writer = pim.write_manifest(
        format_version, _py_spec(), _py_schema(), io.new_output(manifest_path), 42, "deflate"
    )
    partitions = [Record(19723, 1, Decimal("1.25"), "a"), Record(None, 3, Decimal("-3.00"), None)]
    with writer as w:
        for i, partition in enumerate(partitions):
            df = pim.DataFile.from_args(
                content=pim.DataFileContent.DATA,
                file_path=f"s3://b/{i}.parquet",
                file_format=pim.FileFormat.PARQUET,
                partition=partition,
                record_count=3 + i,
                file_size_in_bytes=100,
                column_sizes={1: 5},
                value_counts={1: 3},
                null_value_counts={1: 0},
                nan_value_counts={},
                lower_bounds={1: b"\x01" * 8},
                upper_bounds={1: b"\x02" * 8},
                split_offsets=[4],
                sort_order_id=0,
            )
            w.add_entry(
                pim.ManifestEntry.from_args(
                    status=pim.ManifestEntryStatus.ADDED, snapshot_id=42, data_file=df
                )
            )
    py_mf = writer.to_manifest_file()
    list_path = str(tmp_path / "snap.avro")
    sequence_number = None if format_version == 1 else 5
    with pim.write_manifest_list(
        format_version, io.new_output(list_path), 42, None, sequence_number, "deflate"
    ) as lw:
        lw.add_manifests([py_mf])

    (mf,) = read_manifest_list(Path(list_path).read_bytes(), list_path)
    assert mf.manifest_path == manifest_path
    assert mf.sequence_number == (0 if format_version == 1 else 5)
    assert (mf.added_files_count, mf.added_rows_count) == (2, 7)
    assert [s.lower_bound for s in mf.partitions] == [s.lower_bound for s in py_mf.partitions]

    meta, entries = read_manifest(Path(manifest_path).read_bytes(), manifest_path, mf)
    assert meta.format_version == format_version
    assert [f.name for f in meta.spec.fields] == ["dt", "l_bucket", "dec", "s_trunc"]
    assert meta.schema.find_field("dec").field_type == SCHEMA.find_field("dec").field_type
    assert [e.data_file.partition for e in entries] == [
        (19723, 1, Decimal("1.25"), "a"),
        (None, 3, Decimal("-3.00"), None),
    ]
    assert [(e.snapshot_id, e.sequence_number, e.file_sequence_number) for e in entries] == [
        (42, mf.sequence_number, mf.sequence_number)
    ] * 2
    first = entries[0].data_file
    assert first.content is FileContent.DATA
    assert first.file_path == "s3://b/0.parquet"
    assert (first.record_count, first.file_size_in_bytes) == (3, 100)
    assert first.lower_bounds == {1: b"\x01" * 8}
    assert first.split_offsets == [4]

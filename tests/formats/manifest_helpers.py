"""Builders shared by the manifest and manifest-list tests: a schema with a column of every
primitive type, partition specs using every transform, and data files."""

from __future__ import annotations

import io
import uuid
from decimal import Decimal
from typing import Any

import fastavro

from iceduck.spec.manifest import DataFile, EntryStatus, FileContent, FileFormat, ManifestEntry
from iceduck.spec.partition import PartitionField, PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.transforms import parse_transform
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

COLUMNS = (
    ("b", BooleanType()),
    ("i", IntegerType()),
    ("l", LongType()),
    ("f", FloatType()),
    ("d", DoubleType()),
    ("dec", DecimalType(10, 2)),
    ("bigdec", DecimalType(38, 5)),
    ("dt", DateType()),
    ("t", TimeType()),
    ("ts", TimestampType()),
    ("tstz", TimestamptzType()),
    ("s", StringType()),
    ("u", UUIDType()),
    ("fx", FixedType(3)),
    ("bin", BinaryType()),
    ("tsns", TimestampNanoType()),
    ("tstzns", TimestamptzNanoType()),
)
SCHEMA = Schema(tuple(NestedField(i + 1, name, t) for i, (name, t) in enumerate(COLUMNS)), schema_id=3)
NS_COLUMNS = ("tsns", "tstzns")


def column_id(name: str) -> int:
    return SCHEMA.find_field(name).field_id


# (source column, transform, a sample partition value, a second larger value)
PARTITIONING: list[tuple[str, str, Any, Any]] = [
    ("b", "identity", False, True),
    ("i", "identity", -5, 7),
    ("l", "identity", -(2**40), 2**40),
    ("f", "identity", -1.5, 2.25),
    ("d", "identity", -0.5, 1e300),
    ("dec", "identity", Decimal("-12.34"), Decimal("99.99")),
    ("bigdec", "identity", Decimal("-123456789012345678901234567890.12345"), Decimal("1.00000")),
    ("dt", "identity", -1, 19723),
    ("t", "identity", 0, 86_399_999_999),
    ("ts", "identity", -1, 1_700_000_000_000_000),
    ("tstz", "identity", 0, 1_700_000_000_000_001),
    ("s", "identity", "", "zé"),
    ("u", "identity", uuid.UUID(int=1), uuid.UUID(int=2)),
    ("fx", "identity", b"\x00\x01\x02", b"\xff\x00\x00"),
    ("bin", "identity", b"", b"\xff"),
    ("l", "bucket[16]", 0, 15),
    ("s", "truncate[2]", "ab", "zz"),
    ("dec", "truncate[10]", Decimal("-10.00"), Decimal("10.00")),
    ("i", "truncate[10]", -10, 10),
    ("bin", "truncate[1]", b"\x00", b"\x01"),
    ("dt", "year", -1, 54),
    ("ts", "month", -1, 648),
    ("tstz", "day", -1, 19723),
    ("ts", "hour", -1, 473_000),
    ("i", "void", None, None),
    ("tsns", "identity", -1, 1_700_000_000_000_000_123),
    ("tstzns", "day", -1, 19723),
]


def spec_for(format_version: int, spec_id: int = 0) -> tuple[PartitionSpec, list[tuple[Any, Any]]]:
    """A spec with every transform (nanosecond columns only from v3) and its sample values."""
    fields, samples = [], []
    for column, transform, low, high in PARTITIONING:
        if column in NS_COLUMNS and format_version < 3:
            continue
        name = f"{column}_{transform.split('[')[0]}_{len(fields)}"
        fields.append(PartitionField(column_id(column), 1000 + len(fields), name, parse_transform(transform)))
        samples.append((low, high))
    return PartitionSpec(spec_id, tuple(fields)), samples


def data_file(
    path: str,
    partition: tuple[Any, ...],
    record_count: int = 10,
    content: FileContent = FileContent.DATA,
    **kwargs: Any,
) -> DataFile:
    defaults: dict[str, Any] = {
        "column_sizes": {1: 10, 2: 20},
        "value_counts": {1: record_count, 2: record_count},
        "null_value_counts": {1: 0, 2: 1},
        "nan_value_counts": {4: 0},
        "lower_bounds": {2: (-5).to_bytes(4, "little", signed=True)},
        "upper_bounds": {2: (7).to_bytes(4, "little", signed=True)},
        "split_offsets": [4],
        "sort_order_id": 0 if content is not FileContent.POSITION_DELETES else None,
    }
    defaults.update(kwargs)
    return DataFile(
        content=content,
        file_path=path,
        file_format=defaults.pop("file_format", FileFormat.PARQUET),
        partition=partition,
        record_count=record_count,
        file_size_in_bytes=defaults.pop("file_size_in_bytes", 1234),
        **defaults,
    )


def entry(
    status: EntryStatus,
    df: DataFile,
    snapshot_id: int | None = None,
    seq: int | None = None,
    file_seq: int | None = None,
) -> ManifestEntry:
    return ManifestEntry(status, snapshot_id, df, seq, file_seq)


def decode(data: bytes) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """fastavro's own view of a container: metadata and records (logical types applied)."""
    reader = fastavro.reader(io.BytesIO(data))
    return dict(reader.metadata), list(reader)

"""Partition folders, data file and index file locations."""

from __future__ import annotations

import dataclasses
import os
from decimal import Decimal

import pytest

from iceduck.errors import UnsupportedError
from iceduck.formats.paimon.paths import data_file_path, index_file_path, partition_path
from iceduck.formats.paimon.table_files import read_schema, read_snapshot
from iceduck.spec.paimon.binary_row import decode_row
from iceduck.spec.paimon.manifest import FileKind, IndexManifestEntry
from iceduck.spec.paimon.partition_names import java_float_text
from iceduck.spec.paimon.schema import TableSchema, schema_from_json
from tests.formats.paimon.fixture import files_of, table


@pytest.mark.parametrize("name", ["app", "pk", "typed", "dv", "stats", "names_legacy", "names_cast"])
def test_every_live_file_of_the_fixtures_exists(name: str) -> None:
    """The folders pypaimon wrote (``dt=2024-01-01/``, ``p_date=19723/``,
    ``s=a%2Fb%3Ac%3Dd%25e %7Bx%7D%23%3F/ts=2024-01-01T10%3A00%3A00.123456/f=0.1/``,
    ``ts=2024-01-01 00%3A00%3A00.000000/f=1.0E7/`` with ``partition.legacy-name`` false,
    ``__DEFAULT_PARTITION__`` for null and blank values) are the ones derived from the
    decoded partition values."""
    location = table(name)
    snapshot = read_snapshot(location, 1)
    schema = read_schema(location, snapshot.schema_id)
    types = [f.type for f in schema.partition_fields]
    for entry in files_of(location, snapshot):
        partition = decode_row(entry.partition, types, "p")
        assert os.path.isfile(data_file_path(location, schema, partition, entry.bucket, entry.file))


def _schema(partition_types: list[str], **options: str) -> TableSchema:
    fields = [{"id": i, "name": f"p{i}", "type": t} for i, t in enumerate(partition_types)]
    obj = {
        "id": 0,
        "fields": [*fields, {"id": 99, "name": "v", "type": "INT"}],
        "partitionKeys": [f["name"] for f in fields],
        "options": options,
    }
    return schema_from_json(obj, "s")


def test_legacy_names() -> None:
    """``partition.legacy-name`` true (the default): Java ``toString`` of the internal values."""
    schema = _schema(
        ["DATE", "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)", "DECIMAL(20, 8)", "BOOLEAN"]
    )
    values = (19723, 36_000_123_000, 1704103200_000_000, 1704103200_123_456, 1704103200_123_456_789,
              Decimal("0.00000001"), False)  # fmt: skip
    assert partition_path(schema, values) == (
        "p0=19723/p1=36000123/p2=2024-01-01T10%3A00/p3=2024-01-01T10%3A00%3A00.123456/"
        "p4=2024-01-01T10%3A00%3A00.123456789/p5=0.00000001/p6=false/"
    )
    seconds = _schema(["TIMESTAMP(3)", "TIMESTAMP(3)"])
    assert partition_path(seconds, (1704103201_000_000, -1000)) == (
        "p0=2024-01-01T10%3A00%3A01/p1=1969-12-31T23%3A59%3A59.999/"
    )


def test_cast_names() -> None:
    """``partition.legacy-name`` false: casts to string."""
    schema = _schema(
        ["DATE", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIME(2)"], **{"partition.legacy-name": "false"}
    )
    values = (19723, 1704103200_000_000, 1704103200_120_000, 101_000)
    assert partition_path(schema, values) == (
        "p0=2024-01-01/p1=2024-01-01 10%3A00%3A00.000/p2=2024-01-01 10%3A00%3A00.120000/p3=00%3A00%3A00.10/"
    )
    ltz = _schema(["TIMESTAMP_LTZ(3)"], **{"partition.legacy-name": "false"})
    with pytest.raises(UnsupportedError, match="time zone"):
        partition_path(ltz, (0,))


def test_default_name_and_escaping() -> None:
    schema = _schema(["STRING", "STRING", "STRING", "INT"])
    assert partition_path(schema, (None, "", " ", None)) == "p0=__DEFAULT_PARTITION__/" * 1 + (
        "p1=__DEFAULT_PARTITION__/p2=__DEFAULT_PARTITION__/p3=__DEFAULT_PARTITION__/"
    )
    other = _schema(["STRING"], **{"partition.default-name": "none"})
    assert partition_path(other, (None,)) == "p0=none/"
    assert partition_path(schema, ("a/b:c", "x=y%", "é {}[]^#?*'\"\\", 1)) == (
        "p0=a%2Fb%3Ac/p1=x%3Dy%25/p2=é %7B%7D%5B%5D%5E%23%3F%2A%27%22%5C/p3=1/"
    )
    assert partition_path(_schema([]), ()) == ""


@pytest.mark.parametrize(
    ("value", "single", "text"),
    [
        (0.1, False, "0.1"),
        (1e7, False, "1.0E7"),
        (1234567.0, False, "1234567.0"),
        (0.001, False, "0.001"),
        (0.00012, False, "1.2E-4"),
        (100.0, False, "100.0"),
        (-2.5, True, "-2.5"),
        (0.1, True, "0.1"),  # float32's shortest digits, not float64's 0.10000000149011612
        (-0.0, False, "-0.0"),
        (float("nan"), False, "NaN"),
        (float("-inf"), True, "-Infinity"),
    ],
)
def test_java_float_text(value: float, single: bool, text: str) -> None:
    assert java_float_text(value, single) == text


def test_unsupported_partition_types() -> None:
    with pytest.raises(UnsupportedError, match="BYTES"):
        partition_path(_schema(["BYTES"]), (b"x",))
    with pytest.raises(UnsupportedError, match="BINARY"):
        partition_path(_schema(["BINARY(2)"], **{"partition.legacy-name": "false"}), (b"xy",))
    # a float's cast to string is its Java toString too
    assert partition_path(_schema(["FLOAT"], **{"partition.legacy-name": "false"}), (0.1,)) == "p0=0.1/"


def test_data_file_locations() -> None:
    location = table("typed")
    schema = read_schema(location, 0)
    (entry, *_) = files_of(location, read_snapshot(location, 1))
    partition = (7, 19723, True, Decimal("12.34"), "short")
    name = entry.file.file_name
    assert data_file_path(location + "/", schema, partition, 3, entry.file) == (
        f"{location}/p_int=7/p_date=19723/p_bool=true/p_dec=12.34/p_str=short/bucket-3/{name}"
    )
    moved = dataclasses.replace(schema, options={"data-file.path-directory": "data"})
    assert data_file_path("s3://b/t", moved, partition, -2, entry.file) == (
        f"s3://b/t/data/p_int=7/p_date=19723/p_bool=true/p_dec=12.34/p_str=short/bucket-postpone/{name}"
    )
    external = dataclasses.replace(entry.file, external_path="s3://other/x/data-1.parquet")
    assert data_file_path(location, schema, partition, 0, external) == "s3://other/x/data-1.parquet"


def test_index_file_locations() -> None:
    entry = IndexManifestEntry(FileKind.ADD, bytes(12), 1, "DELETION_VECTORS", "index-a-1", 10, 1)
    assert index_file_path("s3://b/t", entry) == "s3://b/t/index/index-a-1"
    beside = _schema(["INT"], **{"index-file-in-data-file-dir": "true"})
    assert index_file_path("s3://b/t", entry, beside, (5,)) == "s3://b/t/p0=5/bucket-1/index-a-1"
    external = dataclasses.replace(entry, external_path="file:/x/index-a-1")
    assert index_file_path("s3://b/t", external, beside, (5,)) == "file:/x/index-a-1"

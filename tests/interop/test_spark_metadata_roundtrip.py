"""Every metadata JSON and Puffin file Spark wrote is read into iceduck's model and written back.

The rewritten file must carry the same fields and values as Spark's: the metadata JSON is
compared as parsed JSON, and Puffin files byte for byte (iceduck writes what Iceberg Java
writes). Manifest and manifest-list round trips live in ``test_spark_manifest_roundtrip``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.deletion_vector import serialize_dv
from iceduck.formats.manifests import read_manifest
from iceduck.formats.metadata_json import read_table_metadata, table_metadata_to_json, write_table_metadata
from iceduck.formats.puffin import (
    PuffinWriter,
    read_blob,
    read_deletion_vectors,
    read_puffin_footer,
    write_deletion_vectors,
)
from tests.support.spark_warehouse import SparkWarehouse


def _files(warehouse: SparkWarehouse, suffix: str) -> list[Path]:
    return sorted(p for p in warehouse.path.rglob(f"*{suffix}") if not p.name.startswith("."))


def test_every_metadata_json_round_trips(spark_warehouse: SparkWarehouse) -> None:
    files = _files(spark_warehouse, ".metadata.json")
    versions = set()
    for path in files:
        data = path.read_bytes()
        md = read_table_metadata(data, str(path))
        versions.add(md.format_version)
        assert table_metadata_to_json(md) == json.loads(data), path
        # and the bytes iceduck writes parse back to the same model
        assert read_table_metadata(write_table_metadata(md), str(path)) == md, path
    assert versions == {1, 2, 3}
    assert len(files) >= len(spark_warehouse.tables)


def test_every_puffin_file_round_trips(spark_warehouse: SparkWarehouse) -> None:
    files = _files(spark_warehouse, ".puffin")
    assert files, "the warehouse has v3 merge-on-read tables, so it must hold deletion vectors"
    for path in files:
        data = path.read_bytes()
        footer = read_puffin_footer(data, str(path))
        assert footer.blobs, path
        assert {b.type for b in footer.blobs} == {"deletion-vector-v1"}, path

        # the generic writer reproduces the file from the footer and the raw blobs
        writer = PuffinWriter(properties=footer.properties)
        for blob in footer.blobs:
            writer.add_blob(
                read_blob(data, blob, str(path)),
                type=blob.type,
                fields=blob.fields,
                snapshot_id=blob.snapshot_id,
                sequence_number=blob.sequence_number,
                properties=blob.properties,
                compression_codec=blob.compression_codec,
            )
        assert writer.finish() == data, path

        # and the deletion vectors, decoded and encoded again, are the same bytes
        dvs = read_deletion_vectors(data, str(path))
        for dv, blob in zip(dvs, footer.blobs, strict=True):
            assert len(dv.vector) == dv.cardinality > 0
            assert serialize_dv(dv.vector) == read_blob(data, blob, str(path)), path
        created_by = footer.properties.get("created-by", "")
        rewritten, _ = write_deletion_vectors(
            [(dv.referenced_data_file, dv.vector) for dv in dvs], created_by=created_by
        )
        assert rewritten == data, path


@pytest.mark.parametrize("kind", ["metadata", "puffin"])
def test_fixture_has_files_of_each_kind(spark_warehouse: SparkWarehouse, kind: str) -> None:
    suffix = {"metadata": ".metadata.json", "puffin": ".puffin"}[kind]
    assert _files(spark_warehouse, suffix)


def test_damaged_spark_files_fail_with_errors_naming_file_and_problem(
    spark_warehouse: SparkWarehouse, tmp_path: Path
) -> None:
    """Real files, damaged the way disks and bad copies damage them."""
    metadata = _files(spark_warehouse, ".metadata.json")[0]
    doc = json.loads(metadata.read_bytes())
    doc["format-version"] = 4
    with pytest.raises(UnsupportedError, match=rf"{re.escape(str(metadata))}.*format.version.*4"):
        read_table_metadata(json.dumps(doc).encode(), str(metadata))
    with pytest.raises(CorruptDataError, match=re.escape(str(metadata))):
        read_table_metadata(metadata.read_bytes()[:-10], str(metadata))

    manifest = next(p for p in spark_warehouse.path.rglob("metadata/*-m0.avro"))
    data = manifest.read_bytes()
    with pytest.raises(CorruptDataError, match=re.escape(str(manifest))):
        read_manifest(data[: len(data) // 2], str(manifest))

    puffin = _files(spark_warehouse, ".puffin")[0]
    data = bytearray(puffin.read_bytes())
    blob = read_puffin_footer(bytes(data), str(puffin)).blobs[0]
    data[blob.offset + blob.length - 1] ^= 0xFF  # the last byte of the blob's CRC
    with pytest.raises(CorruptDataError, match=rf"{re.escape(str(puffin))}.*CRC"):
        read_deletion_vectors(bytes(data), str(puffin))
    data = bytearray(puffin.read_bytes())
    data[0:4] = b"PFA0"
    with pytest.raises(CorruptDataError, match=rf"{re.escape(str(puffin))}.*magic"):
        read_puffin_footer(bytes(data), str(puffin))

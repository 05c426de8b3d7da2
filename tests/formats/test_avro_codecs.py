"""Avro container blocks compressed with snappy (Avro spec, "snappy": the raw Snappy data,
then "the 4-byte, big-endian CRC32 checksum of the uncompressed data in the block"), as
Paimon before 0.9 wrote its manifests. fastavro encodes the records (it cannot compress
snappy without python-snappy); the block is framed here by the spec's rules."""

from __future__ import annotations

import io
import json
import zlib

import fastavro
import pyarrow as pa
import pytest

from iceduck.errors import CorruptDataError
from iceduck.formats.avro_files import _encode_long, encode_header, read_avro

SCHEMA = {
    "type": "record",
    "name": "r",
    "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": "string"}],
}
RECORDS = [{"a": i, "b": "x" * (i % 7)} for i in range(500)]
SYNC = bytes(range(16))


def _snappy_file(crc_delta: int = 0) -> tuple[bytes, int]:
    """The container, and the offset of its block's compressed bytes."""
    raw = io.BytesIO()
    parsed = fastavro.parse_schema(SCHEMA)
    for record in RECORDS:
        fastavro.schemaless_writer(raw, parsed, record)
    plain = raw.getvalue()
    block = pa.compress(plain, codec="snappy", asbytes=True) + (
        (zlib.crc32(plain) ^ crc_delta).to_bytes(4, "big")
    )
    head = encode_header({"avro.schema": json.dumps(SCHEMA), "avro.codec": "snappy"}, SYNC)
    head += _encode_long(len(RECORDS)) + _encode_long(len(block))
    return head + block + SYNC, len(head)


def test_snappy_blocks() -> None:
    data, _ = _snappy_file()
    assert read_avro(data, "m").records == RECORDS


def test_snappy_crc_mismatch_names_the_file() -> None:
    data, _ = _snappy_file(crc_delta=1)
    with pytest.raises(CorruptDataError, match="snappy block CRC mismatch") as info:
        read_avro(data, "t/manifest/manifest-1")
    assert "t/manifest/manifest-1" in str(info.value)


def test_corrupt_snappy_data_names_the_file() -> None:
    data, start = _snappy_file()
    broken = bytearray(data)
    broken[start + 4 : start + 40] = b"\xff" * 36  # inside the compressed bytes
    with pytest.raises(CorruptDataError) as info:
        read_avro(bytes(broken), "t/manifest/manifest-2")
    assert "t/manifest/manifest-2" in str(info.value)


# -- Paimon's Java writer: rows as a nullable record ---------------------------------------------


def _nullable_record_file(records: list[dict[str, object] | None]) -> bytes:
    """What Paimon's Java Avro writer writes: the schema ``["null", {record}]``, so each row
    starts with its union branch."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(["null", SCHEMA]), records, codec="null")
    return out.getvalue()


def test_rows_written_as_a_nullable_record_read_as_records() -> None:
    contents = read_avro(_nullable_record_file(list(RECORDS[:20])), "data-0.avro")
    assert contents.records == RECORDS[:20]
    assert contents.schema["fields"] == SCHEMA["fields"]


def test_a_null_row_is_corrupt_data() -> None:
    with pytest.raises(CorruptDataError, match="a record of the file is null"):
        read_avro(_nullable_record_file([RECORDS[0], None]), "data-0.avro")

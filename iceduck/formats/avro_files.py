"""Avro object container files for metadata (manifests, manifest lists): read and write.

fastavro does the record coding (it is compiled), iceduck handles the header itself for
one reason: fastavro converts logical types on read (dates to ``datetime.date``,
timestamps to ``datetime``, decimals to ``Decimal``), while iceduck represents them as the
spec's physical units (``iceduck.spec.types``: int days, int micros). Converting back
would cost a Python call per value and lose nanoseconds, so the header's schema is
swapped for one without ``logicalType`` annotations before fastavro sees it; records then
decode straight to ints and bytes. Writing does the reverse: fastavro encodes with the
plain schema and the header gets the annotated one, so what lands on disk is exactly the
schema Java writes.

Iceberg metadata is read by field id: given the Iceberg struct a reader expects, the
writer schema is projected onto it (:mod:`iceduck.formats.avro_projection`) before
decoding, so records come keyed by the reader's names whatever names the writer used.

Every failure to decode is reported as :class:`CorruptDataError` naming the file.
"""

from __future__ import annotations

import functools
import io
import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO

import fastavro

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.formats.avro_projection import project_record
from iceduck.spec.types import StructType

MAGIC = b"Obj\x01"
SCHEMA_KEY = "avro.schema"
CODEC_KEY = "avro.codec"
NULL = "null"
#: Java's default ``write.avro.compression-codec`` is gzip, which Avro calls ``deflate``
DEFAULT_CODEC = "deflate"

AvroInput = bytes | bytearray | memoryview | BinaryIO


@dataclass(frozen=True)
class AvroContents:
    """A decoded container: key-value metadata (``avro.*`` included), the writer schema
    as stored (logical types intact) and the records (logical types not applied).

    ``read_schema`` is the writer schema projected onto the expected struct (fields renamed
    to the reader's names; see :func:`read_avro`), the writer schema itself when no struct
    was expected: the records are keyed by its names. Both schemas are shared by every
    file with the same schema text: read them, never mutate them.
    """

    metadata: dict[str, str]
    schema: dict[str, Any]
    records: list[dict[str, Any]]
    read_schema: dict[str, Any]


def read_bytes(data: AvroInput, path: str) -> bytes:
    """The whole input as bytes (metadata files are small; planning reads them whole)."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, bytearray | memoryview):
        return bytes(data)
    try:
        out = data.read()
    except OSError as e:
        raise CorruptDataError(f"cannot read Avro file: {e}", path) from e
    if not isinstance(out, bytes | bytearray):
        raise CorruptDataError("Avro input must be opened in binary mode", path)
    return bytes(out)


def read_avro(
    data: AvroInput, path: str, expected: StructType | None = None, kept: frozenset[int] = frozenset()
) -> AvroContents:
    """Decode a whole container file without logical-type conversion.

    With ``expected`` (an Iceberg struct), fields are matched to it by field id and records
    are keyed by its names (:func:`iceduck.formats.avro_projection.project_record`, which
    also says what ``kept`` is); without, records are keyed by the writer's names.

    Planning decodes thousands of manifests that share a handful of schemas, so the
    stripped, parsed schema is memoised by its text and blocks are decoded here with
    fastavro's schemaless reader: that halves the cost of a cold manifest read compared
    with handing fastavro each file (which re-parses the header schema every time).
    """
    raw = read_bytes(data, path)
    metadata, sync, body_start = parse_header(raw, path)
    schema_text = metadata.get(SCHEMA_KEY)
    if schema_text is None:
        raise CorruptDataError("Avro header has no avro.schema", path)
    schema, read_schema, parsed, nullable = _parsed_schema(schema_text, path, expected, kept)
    codec = metadata.get(CODEC_KEY, "null")
    try:
        records = list(_records(raw, body_start, sync, parsed, codec, path))
        if nullable and None in records:  # a null row of a nullable record schema
            raise CorruptDataError("a record of the file is null", path)
    except CorruptDataError:
        raise
    except Exception as e:  # fastavro raises EOFError, ValueError, zlib.error, ... on bad bytes
        raise CorruptDataError(f"truncated or corrupt Avro data: {type(e).__name__}: {e}", path) from e
    return AvroContents(metadata, schema, records, read_schema)


@functools.lru_cache(maxsize=256)
def _parsed_schema_cached(
    text: str, expected: StructType | None, kept: frozenset[int]
) -> tuple[dict[str, Any], dict[str, Any], Any, bool]:
    schema, nullable = _schema_from_text(text, "")
    read_schema = schema if expected is None else project_record(schema, expected, "", kept)
    plain = strip_logical_types(read_schema)
    return schema, read_schema, fastavro.parse_schema([NULL, plain] if nullable else plain), nullable


def _parsed_schema(
    text: str, path: str, expected: StructType | None, kept: frozenset[int]
) -> tuple[dict[str, Any], dict[str, Any], Any, bool]:
    try:
        return _parsed_schema_cached(text, expected, kept)
    except CorruptDataError as e:
        raise CorruptDataError(e.problem, path) from None
    except Exception as e:  # fastavro.parse_schema: SchemaParseException, ValueError, ...
        raise CorruptDataError(f"avro.schema is not a valid Avro schema: {e}", path) from e


def _records(raw: bytes, pos: int, sync: bytes, parsed: Any, codec: str, path: str) -> Iterable[Any]:
    """Records of the data blocks: count, byte size, (compressed) records, sync marker."""
    read = fastavro.schemaless_reader
    end = len(raw)
    while pos < end:
        count, pos = _read_long(raw, pos)
        size, pos = _read_long(raw, pos)
        if count < 0 or size < 0 or pos + size + 16 > end:
            raise CorruptDataError("truncated Avro data block", path)
        block = raw[pos : pos + size]
        pos += size
        if raw[pos : pos + 16] != sync:
            raise CorruptDataError("Avro sync marker mismatch after a data block", path)
        pos += 16
        if codec == "deflate":
            block = zlib.decompress(block, -15)
        elif codec == "zstandard":  # Paimon's default manifest.compression is zstd
            block = _zstd_decompress(block)
        elif codec == "snappy":  # Paimon before 0.9 and Iceberg's write.avro.compression-codec
            block = _snappy_decompress(block, path)
        elif codec != "null":
            raise CorruptDataError(f"unsupported Avro codec {codec!r}", path)
        stream = io.BytesIO(block)
        for _ in range(count):
            yield read(stream, parsed, None)


def _zstd_decompress(block: bytes) -> bytes:
    """A zstandard block: one Zstandard frame, whose content size Java's codec may leave out."""
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(block)


def _snappy_decompress(block: bytes, path: str) -> bytes:
    """Avro spec, "snappy": "each compressed block is followed by the 4-byte, big-endian CRC32
    checksum of the uncompressed data in the block". Raw Snappy data starts with the
    uncompressed length as a little-endian base-128 varint, which pyarrow's codec needs."""
    import pyarrow as pa

    if len(block) < 5:
        raise CorruptDataError("truncated snappy block", path)
    data, crc = block[:-4], int.from_bytes(block[-4:], "big")
    size = shift = pos = 0
    while True:
        if pos >= len(data) or shift > 28:
            raise CorruptDataError("snappy block without a valid length", path)
        byte = data[pos]
        pos += 1
        size |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    try:
        out = pa.decompress(data, decompressed_size=size, codec="snappy", asbytes=True)
    except (OSError, ValueError) as e:  # pyarrow raises ArrowIOError / ArrowInvalid
        raise CorruptDataError(f"corrupt snappy block: {e}", path) from None
    if zlib.crc32(out) != crc:
        raise CorruptDataError("snappy block CRC mismatch", path)
    return bytes(out)


def write_avro(
    schema: dict[str, Any],
    records: Iterable[dict[str, Any]],
    metadata: dict[str, str],
    codec: str = DEFAULT_CODEC,
) -> bytes:
    """Encode ``records`` (physical values, no logical conversion) into a container whose
    header carries ``schema`` verbatim (compact JSON, as Java writes it) and ``metadata``."""
    plain = strip_logical_types(schema)
    buffer = io.BytesIO()
    try:
        fastavro.writer(buffer, fastavro.parse_schema(plain), records, codec=codec, metadata=dict(metadata))
    except (TypeError, ValueError, OverflowError, AttributeError) as e:  # a value of the wrong type
        raise ValidationError(f"cannot encode a value as Avro: {type(e).__name__}: {e}") from e
    written = buffer.getvalue()
    stored, sync, body_start = parse_header(written, "<written>")
    header_meta = {**metadata, SCHEMA_KEY: _dumps(schema), CODEC_KEY: stored[CODEC_KEY]}
    return encode_header(header_meta, sync) + written[body_start:]


def strip_logical_types(schema: Any) -> Any:
    """A copy of an Avro schema without ``logicalType`` annotations (same binary encoding)."""
    if isinstance(schema, dict):
        return {k: strip_logical_types(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [strip_logical_types(s) for s in schema]
    return schema


def _dumps(schema: Any) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _schema_from_text(text: str, path: str) -> tuple[dict[str, Any], bool]:
    """The file's record schema, and whether it is written as a nullable record: Paimon's
    Java writer declares its rows ``["null", {record}]`` (each row then starts with the
    union's branch index), Iceberg and pypaimon a plain record."""
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as e:
        raise CorruptDataError(f"avro.schema is not valid JSON: {e}", path) from e
    nullable = isinstance(schema, list) and len(schema) == 2 and NULL in schema
    if nullable:
        schema = next(s for s in schema if s != NULL)
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise CorruptDataError("avro.schema is not a record schema (nor a nullable one)", path)
    return schema, nullable


# -- container header (Avro spec "Object Container Files") --------------------------------------


def parse_header(raw: bytes, path: str) -> tuple[dict[str, str], bytes, int]:
    """(metadata, sync marker, offset of the first block) of a container file."""
    if raw[:4] != MAGIC:
        raise CorruptDataError("not an Avro file (missing 'Obj\\x01' magic)", path)
    pos = 4
    metadata: dict[str, str] = {}
    try:
        while True:
            count, pos = _read_long(raw, pos)
            if count == 0:
                break
            if count < 0:  # a negative count is followed by the block's byte size
                _, pos = _read_long(raw, pos)
                count = -count
            for _ in range(count):
                key, pos = _read_bytes(raw, pos)
                value, pos = _read_bytes(raw, pos)
                metadata[key.decode("utf-8")] = value.decode("utf-8")
    except (IndexError, UnicodeDecodeError) as e:
        raise CorruptDataError(f"truncated or corrupt Avro header: {e}", path) from e
    sync = raw[pos : pos + 16]
    if len(sync) != 16:
        raise CorruptDataError("truncated Avro header (no sync marker)", path)
    return metadata, sync, pos + 16


def encode_header(metadata: dict[str, str], sync: bytes) -> bytes:
    out = bytearray(MAGIC)
    if metadata:
        out += _encode_long(len(metadata))
        for key, value in metadata.items():
            for item in (key.encode("utf-8"), value.encode("utf-8")):
                out += _encode_long(len(item))
                out += item
    out += b"\x00"
    out += sync
    return bytes(out)


def _read_long(raw: bytes, pos: int) -> tuple[int, int]:
    """Avro's zig-zag varint."""
    n = shift = 0
    while True:
        byte = raw[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (n >> 1) ^ -(n & 1), pos


def _read_bytes(raw: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = _read_long(raw, pos)
    if length < 0 or pos + length > len(raw):
        raise IndexError("length beyond the end of the header")
    return raw[pos : pos + length], pos + length


def _encode_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)

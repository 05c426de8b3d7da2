"""Read, edit and rewrite the footer (``FileMetaData``) of a Parquet file in place.

Why: DuckDB annotates every INT32 column with the logical type ``Int(bitWidth=32,
isSigned=true)`` and the converted type ``INT_32``; parquet-mr (Spark) and pyarrow write a
plain INT32. Both are valid Parquet, but Iceberg 1.10's vectorised Spark reader picks its
Arrow vector from the annotation and then fails on such a file once the Iceberg column was
promoted ``int -> long`` ("Type promotion": "int to long" is allowed) with
``ClassCastException: BigIntVector cannot be cast to IntVector`` (apache/iceberg#16341).
So every file iceduck writes drops the two annotations from the INT32 columns of Iceberg
``int`` fields (spec, Appendix A: "int | int32 | -- |" -- no annotation required), exactly
as Spark's files look. Nothing else changes: date, time and decimal INT32 columns keep theirs.

Only the footer is rewritten: data pages, page indexes and bloom filters sit before it and
are addressed by absolute offsets, so truncating the file at the footer's start and
appending the new footer, its 4-byte little-endian length and ``PAR1`` keeps them valid.

The footer is Thrift's *compact protocol*. The codec here is generic: a struct decodes to a
tree of :class:`ThriftField` (field id, compact type, value), so fields this module does not
know (statistics, encryption, future additions) are re-encoded byte-identically, including
the rare long-form headers a writer may use where a short form would do.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.spec.schema import Schema
from iceduck.spec.types import IcebergType, IntegerType, ListType, MapType, StructType

# -- compact protocol type codes (Thrift's TCompactProtocol) ------------------------------
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
_MAX_DEPTH = 64  # a footer nests ~6 deep; deeper means garbage, not a Parquet footer

MAGIC = b"PAR1"
_ENCRYPTED_MAGIC = b"PARE"

# -- parquet.thrift ids used here ---------------------------------------------------------
_FILE_SCHEMA = 2  # FileMetaData.schema: list<SchemaElement>
_EL_TYPE, _EL_CONVERTED, _EL_FIELD_ID, _EL_LOGICAL = 1, 6, 9, 10  # SchemaElement
_PHYSICAL_INT32 = 1  # Type.INT32
_CONVERTED_INT_32 = 17  # ConvertedType.INT_32
_LOGICAL_INTEGER = 10  # LogicalType.INTEGER: IntType {1: i8 bitWidth, 2: bool isSigned}


@dataclass
class ThriftField:
    """One field of a struct as found on disk; ``ttype`` is the compact type code
    (``TRUE`` for every bool field: the header's TRUE/FALSE is the value)."""

    field_id: int
    ttype: int
    value: object
    long_header: bool = False  # written as type byte + zigzag id although a delta would fit


@dataclass
class ThriftStruct:
    fields: list[ThriftField] = field(default_factory=list)

    def get(self, field_id: int) -> ThriftField | None:
        return next((f for f in self.fields if f.field_id == field_id), None)


@dataclass
class ThriftList:
    """A list or set (the enclosing field's or list's type tells which)."""

    elem_type: int
    items: list[object]
    long_header: bool = False  # size in a varint although it is < 15


@dataclass
class ThriftMap:
    key_type: int  # 0 for an empty map: its types are not on disk
    value_type: int
    items: list[tuple[object, object]]


class _Reader:
    """Decodes compact-protocol bytes; raises ValueError on anything malformed."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("unexpected end of data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise ValueError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"length {n} runs past the end of the data")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def value(self, ttype: int, depth: int) -> object:
        if ttype in (TRUE, FALSE):  # an element of a collection: one byte
            return self.byte() == TRUE
        if ttype == BYTE:
            b = self.byte()
            return b - 256 if b > 127 else b
        if ttype in (I16, I32, I64):
            return self.zigzag()
        if ttype == DOUBLE:
            return struct.unpack("<d", self.take(8))[0]
        if ttype == BINARY:
            return self.take(self.varint())
        if depth >= _MAX_DEPTH:
            raise ValueError("nesting too deep")
        if ttype in (LIST, SET):
            return self.list(depth + 1)
        if ttype == MAP:
            return self.map(depth + 1)
        if ttype == STRUCT:
            return self.struct(depth + 1)
        raise ValueError(f"unknown compact type {ttype} at byte {self.pos}")

    def list(self, depth: int) -> ThriftList:
        header = self.byte()
        size, elem = header >> 4, header & 0x0F
        long_header = size == 15
        if long_header:
            size = self.varint()
        self._check_size(size)
        return ThriftList(elem, [self.value(elem, depth) for _ in range(size)], long_header and size < 15)

    def map(self, depth: int) -> ThriftMap:
        size = self.varint()
        if size == 0:
            return ThriftMap(0, 0, [])
        self._check_size(size)
        types = self.byte()
        k, v = types >> 4, types & 0x0F
        return ThriftMap(k, v, [(self.value(k, depth), self.value(v, depth)) for _ in range(size)])

    def struct(self, depth: int = 0) -> ThriftStruct:
        out = ThriftStruct()
        last = 0
        while True:
            header = self.byte()
            if header == STOP:
                return out
            delta, ttype = header >> 4, header & 0x0F
            fid = self.zigzag() if delta == 0 else last + delta
            long_header = delta == 0 and 0 < fid - last <= 15  # only when a short form would do
            last = fid
            if ttype in (TRUE, FALSE):
                out.fields.append(ThriftField(fid, TRUE, ttype == TRUE, long_header))
            else:
                out.fields.append(ThriftField(fid, ttype, self.value(ttype, depth), long_header))

    def _check_size(self, size: int) -> None:
        if size > len(self.data) - self.pos:  # every element takes at least one byte
            raise ValueError(f"collection of {size} elements runs past the end of the data")


class _Writer:
    def __init__(self) -> None:
        self.out = bytearray()

    def varint(self, n: int) -> None:
        while n > 0x7F:
            self.out.append((n & 0x7F) | 0x80)
            n >>= 7
        self.out.append(n)

    def zigzag(self, n: int) -> None:
        self.varint((n << 1) ^ (n >> 63) if n < 0 else n << 1)

    def value(self, ttype: int, v: object) -> None:
        if ttype in (TRUE, FALSE):
            self.out.append(TRUE if v else FALSE)
        elif ttype == BYTE:
            self.out.append(int(v) & 0xFF)  # type: ignore[call-overload]
        elif ttype in (I16, I32, I64):
            self.zigzag(int(v))  # type: ignore[call-overload]
        elif ttype == DOUBLE:
            self.out += struct.pack("<d", v)
        elif ttype == BINARY:
            data = bytes(v)  # type: ignore[call-overload]
            self.varint(len(data))
            self.out += data
        elif ttype in (LIST, SET):
            self.list(v)  # type: ignore[arg-type]
        elif ttype == MAP:
            self.map(v)  # type: ignore[arg-type]
        elif ttype == STRUCT:
            self.struct(v)  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown compact type {ttype}")

    def list(self, v: ThriftList) -> None:
        size = len(v.items)
        if size < 15 and not v.long_header:
            self.out.append(size << 4 | v.elem_type)
        else:
            self.out.append(0xF0 | v.elem_type)
            self.varint(size)
        for item in v.items:
            self.value(v.elem_type, item)

    def map(self, v: ThriftMap) -> None:
        self.varint(len(v.items))
        if v.items:
            self.out.append(v.key_type << 4 | v.value_type)
            for k, item in v.items:
                self.value(v.key_type, k)
                self.value(v.value_type, item)

    def struct(self, v: ThriftStruct) -> None:
        last = 0
        for f in v.fields:
            ttype = (TRUE if f.value else FALSE) if f.ttype in (TRUE, FALSE) else f.ttype
            delta = f.field_id - last
            if 0 < delta <= 15 and not f.long_header:
                self.out.append(delta << 4 | ttype)
            else:
                self.out.append(ttype)
                self.zigzag(f.field_id)
            last = f.field_id
            if ttype not in (TRUE, FALSE):
                self.value(ttype, f.value)
        self.out.append(STOP)


def decode_struct(data: bytes) -> ThriftStruct:
    """The compact-protocol struct that is exactly ``data``; ValueError if malformed."""
    reader = _Reader(data)
    out = reader.struct()
    if reader.pos != len(data):
        raise ValueError(f"{len(data) - reader.pos} bytes follow the end of the struct")
    return out


def encode_struct(value: ThriftStruct) -> bytes:
    """``value`` in the compact protocol (``decode_struct``'s inverse, byte for byte)."""
    writer = _Writer()
    writer.struct(value)
    return bytes(writer.out)


# -- the Parquet footer --------------------------------------------------------------------


def read_footer(path: str) -> tuple[int, ThriftStruct]:
    """(offset where the footer starts, decoded ``FileMetaData``) of the file at local ``path``.

    Raises CorruptDataError naming the file when the tail is not ``<footer> <len> PAR1`` or
    the footer does not decode; UnsupportedError for an encrypted footer (``PARE``)."""
    size = os.path.getsize(path)
    if size < 12:
        raise CorruptDataError(f"not a Parquet file: only {size} bytes", path)
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(size - 8)
        tail = f.read(8)
        length = int.from_bytes(tail[:4], "little")
        if tail[4:] == _ENCRYPTED_MAGIC:
            raise UnsupportedError(f"{path}: Parquet files with an encrypted footer are not supported")
        if head != MAGIC or tail[4:] != MAGIC:
            raise CorruptDataError("not a Parquet file: no PAR1 magic at its start and end", path)
        start = size - 8 - length
        if start < 4:
            raise CorruptDataError(f"Parquet footer length {length} exceeds the file size {size}", path)
        f.seek(start)
        data = f.read(length)
    try:
        return start, decode_struct(data)
    except ValueError as e:
        raise CorruptDataError(f"malformed Parquet footer (FileMetaData): {e}", path) from e


def write_footer(path: str, start: int, metadata: ThriftStruct) -> None:
    """Replace everything from ``start`` (the old footer's offset) with ``metadata``, its
    length and ``PAR1``; the bytes before ``start`` stay where they are."""
    data = encode_struct(metadata)
    with open(path, "r+b") as f:
        f.seek(start)
        f.write(data + len(data).to_bytes(4, "little") + MAGIC)
        f.truncate()


def _is_plain_int32(annotation: ThriftField) -> bool:
    """Whether an annotation of an INT32 column says only "signed 32-bit integer"."""
    if annotation.field_id == _EL_CONVERTED:
        return annotation.value == _CONVERTED_INT_32
    logical = annotation.value
    if not isinstance(logical, ThriftStruct) or len(logical.fields) != 1:
        return False
    only = logical.fields[0]
    if only.field_id != _LOGICAL_INTEGER or not isinstance(only.value, ThriftStruct):
        return False
    bits, signed = only.value.get(1), only.value.get(2)
    return bits is not None and bits.value == 32 and signed is not None and signed.value is True


def strip_schema_annotations(metadata: ThriftStruct, field_ids: set[int]) -> bool:
    """Drop ``converted_type`` INT_32 and logical type ``Int(32, signed)`` from the INT32
    schema elements whose ``field_id`` is in ``field_ids``; whether anything changed.

    Other annotations are left alone even on those ids: they would mean the file is not
    what the table says, and hiding that is not this function's business."""
    schema = metadata.get(_FILE_SCHEMA)
    if schema is None or not isinstance(schema.value, ThriftList):
        return False
    changed = False
    for element in schema.value.items:
        if not isinstance(element, ThriftStruct):
            continue
        physical, fid = element.get(_EL_TYPE), element.get(_EL_FIELD_ID)
        if physical is None or physical.value != _PHYSICAL_INT32 or fid is None or fid.value not in field_ids:
            continue
        kept = [
            f
            for f in element.fields
            if f.field_id not in (_EL_CONVERTED, _EL_LOGICAL) or not _is_plain_int32(f)
        ]
        if len(kept) != len(element.fields):
            element.fields = kept
            changed = True
    return changed


def strip_int32_annotations(path: str, field_ids: set[int]) -> bool:
    """Rewrite the footer of the freshly written Parquet file at local ``path`` so that the
    INT32 columns of ``field_ids`` carry no Int(32)/INT_32 annotation (module docstring:
    Spark's vectorised reader after ``int -> long``); whether the file changed.

    Not crash-safe (the footer is overwritten in place): only for files no snapshot
    references yet."""
    if not field_ids:
        return False
    start, metadata = read_footer(path)
    if not strip_schema_annotations(metadata, field_ids):
        return False
    write_footer(path, start, metadata)
    return True


def int_field_ids(schema: Schema | IcebergType) -> set[int]:
    """Ids of every Iceberg ``int`` field in ``schema``, at any depth (struct fields, list
    elements, map keys and values)."""
    fields: Iterable = schema.fields if isinstance(schema, Schema | StructType | ListType | MapType) else ()
    out: set[int] = set()
    for f in fields:
        if isinstance(f.field_type, IntegerType):
            out.add(f.field_id)
        out |= int_field_ids(f.field_type)
    return out

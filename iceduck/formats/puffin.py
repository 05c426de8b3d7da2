"""Puffin files: reader and writer (Puffin spec, "Format specification").

    The Puffin file has the following structure

        Magic Blob₁ Blob₂ ... Blobₙ Footer

    Footer has the following structure

        Magic FooterPayload FooterPayloadSize Flags Magic

    - ``Magic``: four bytes 0x50, 0x46, 0x41, 0x31 (``PFA1``)
    - ``FooterPayload``: optionally compressed, UTF-8 encoded JSON payload describing
      the blobs in the file
    - ``FooterPayloadSize``: a length in bytes of the ``FooterPayload`` (after
      compression, if compressed), stored as 4 byte integer
    - ``Flags``: 4 bytes for boolean flags; byte 0, bit 0: whether ``FooterPayload`` is
      compressed; all other bits are reserved and should be set to 0 on write

    A 4 byte integer is always signed, in a two's complement representation, stored
    little-endian.

Iceberg uses Puffin for deletion vectors (v3 delete files, see
:mod:`iceduck.formats.deletion_vector`) and table statistics. Deletion vector reads go
straight to a blob by the manifest entry's ``content_offset``/``content_size_in_bytes``
(:func:`read_blob_range`, :func:`read_deletion_vector`), without reading the footer;
sources may therefore be bytes, a seekable binary file object, or a local path, and only
the needed byte ranges are read.

Compression: blobs may be ``lz4`` or ``zstd`` ("a single ... frame, with content size
present"), the footer payload LZ4. Iceberg Java (1.10) reads neither LZ4 blobs nor
compressed footers, so the writer never compresses unless asked to.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.deletion_vector import DV_BLOB_TYPE, deserialize_dv, serialize_dv
from iceduck.io import fileio
from iceduck.spec.deletion_vector import DeletionVector

#: Puffin magic, at the start of the file and twice in the footer.
PUFFIN_MAGIC = b"PFA1"
#: FooterPayloadSize + Flags + Magic.
FOOTER_STRUCT_LENGTH = 12
#: The smallest possible file: magic + (magic, empty payload, footer struct).
MIN_FILE_SIZE = 4 + 4 + FOOTER_STRUCT_LENGTH
#: Field id of the ``_pos`` metadata column, the "field" a deletion vector is computed for.
ROW_POSITION_FIELD_ID = 2147483645
#: Blob properties of a deletion vector (Puffin spec, ``deletion-vector-v1``).
REFERENCED_DATA_FILE = "referenced-data-file"
CARDINALITY = "cardinality"
#: Recommended file property: "human-readable identification of the application writing the file".
CREATED_BY = "created-by"

_FLAG_FOOTER_COMPRESSED = 0x01  # byte 0, bit 0
_FOOTER_CODEC = "lz4"
_LE_I32 = struct.Struct("<i")
_MAX_SIGNED_INT = (1 << 31) - 1

PuffinSource = bytes | bytearray | memoryview | str | os.PathLike | BinaryIO


@dataclass(frozen=True)
class BlobMetadata:
    """One entry of the footer's ``blobs`` list (Puffin spec, "BlobMetadata")."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON object, keys in Iceberg Java's order, optional keys omitted when unset."""
        obj: dict[str, Any] = {
            "type": self.type,
            "fields": list(self.fields),
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            obj["compression-codec"] = self.compression_codec
        if self.properties:
            obj["properties"] = dict(self.properties)
        return obj

    @classmethod
    def from_json(cls, obj: object, path: str | None = None) -> BlobMetadata:
        if not isinstance(obj, dict):
            raise CorruptDataError(f"Puffin footer blob entry is not a JSON object: {obj!r}", path)
        fields = obj.get("fields")
        if not isinstance(fields, list) or not all(_is_json_int(f) for f in fields):
            raise CorruptDataError(f"Puffin blob 'fields' must be a list of integers: {fields!r}", path)
        codec = obj.get("compression-codec")
        if codec is not None and not isinstance(codec, str):
            raise CorruptDataError(f"Puffin blob 'compression-codec' must be a string: {codec!r}", path)
        return cls(
            type=_required(obj, "type", str, path),
            fields=tuple(fields),
            snapshot_id=_required(obj, "snapshot-id", int, path),
            sequence_number=_required(obj, "sequence-number", int, path),
            offset=_required(obj, "offset", int, path),
            length=_required(obj, "length", int, path),
            compression_codec=codec,
            properties=_string_map(obj.get("properties"), "blob properties", path),
        )


@dataclass(frozen=True)
class PuffinFooter:
    """A Puffin file's ``FileMetadata`` plus the sizes table metadata records."""

    blobs: tuple[BlobMetadata, ...]
    properties: Mapping[str, str]
    file_size: int
    #: Total footer size (magic to magic), the statistics file's ``file-footer-size-in-bytes``.
    footer_size: int

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"blobs": [blob.to_json() for blob in self.blobs]}
        if self.properties:
            obj["properties"] = dict(self.properties)
        return obj


@dataclass(frozen=True)
class DeletionVectorBlob:
    """A ``deletion-vector-v1`` blob with the data file it applies to."""

    referenced_data_file: str
    cardinality: int
    offset: int
    length: int
    vector: DeletionVector


# -- reading -------------------------------------------------------------------------------


def read_puffin_footer(
    source: PuffinSource, path: str | None = None, *, file_size: int | None = None
) -> PuffinFooter:
    """Read and validate the footer (the leading magic, the footer, every blob's range).

    ``file_size`` (e.g. a manifest's ``file_size_in_bytes``) saves a seek to the end.
    Raises :class:`CorruptDataError` naming the file for a malformed file and
    :class:`UnsupportedError` for footer flags this reader does not know.
    """
    with _RangeReader(source, path, file_size) as reader:
        path, size = reader.path, reader.size
        if size < MIN_FILE_SIZE:
            raise CorruptDataError(
                f"not a Puffin file: {size} bytes, shorter than the {MIN_FILE_SIZE}-byte minimum", path
            )
        _check_magic(reader.read_at(0, 4), "file start", path)
        tail = reader.read_at(size - FOOTER_STRUCT_LENGTH, FOOTER_STRUCT_LENGTH)
        _check_magic(tail[8:12], "file end", path)
        (payload_size,) = _LE_I32.unpack_from(tail, 0)
        if payload_size < 0 or 4 + 4 + payload_size + FOOTER_STRUCT_LENGTH > size:
            raise CorruptDataError(
                f"Puffin footer payload size {payload_size} does not fit in the {size}-byte file", path
            )
        compressed = _decode_flags(tail[4:8], path)
        footer_size = 4 + payload_size + FOOTER_STRUCT_LENGTH
        footer_start = size - footer_size
        footer = reader.read_at(footer_start, 4 + payload_size)
    _check_magic(footer[:4], f"footer start (offset {footer_start})", path)
    payload = footer[4:]
    if compressed:
        payload = decompress(payload, _FOOTER_CODEC, "footer payload", path)
    file_metadata = _parse_footer_json(payload, path)
    blobs = tuple(BlobMetadata.from_json(blob, path) for blob in file_metadata["blobs"])
    for blob in blobs:
        if blob.offset < 4 or blob.length < 0 or blob.offset + blob.length > footer_start:
            raise CorruptDataError(
                f"Puffin blob {blob.type!r} at offset {blob.offset} with length {blob.length} lies "
                f"outside the blob area [4, {footer_start})",
                path,
            )
    properties = _string_map(file_metadata.get("properties"), "file properties", path)
    return PuffinFooter(blobs=blobs, properties=properties, file_size=size, footer_size=footer_size)


def read_blob(source: PuffinSource, blob: BlobMetadata, path: str | None = None) -> bytes:
    """The (decompressed) content of one blob described by the footer."""
    return read_blob_range(source, blob.offset, blob.length, path, compression_codec=blob.compression_codec)


def read_blob_range(
    source: PuffinSource,
    offset: int,
    length: int,
    path: str | None = None,
    *,
    compression_codec: str | None = None,
) -> bytes:
    """Read ``length`` bytes at ``offset`` (and decompress them) without reading the footer."""
    with _RangeReader(source, path, None) as reader:
        if offset < 0 or length < 0 or offset + length > reader.size:
            raise CorruptDataError(
                f"Puffin blob at offset {offset} with length {length} extends past the end of "
                f"the {reader.size}-byte file",
                reader.path,
            )
        raw = reader.read_at(offset, length)
        path = reader.path
    if compression_codec is None:
        return raw
    return decompress(raw, compression_codec, f"blob at offset {offset}", path)


def read_deletion_vector(
    source: PuffinSource,
    offset: int,
    length: int,
    path: str | None = None,
    *,
    cardinality: int | None = None,
) -> DeletionVector:
    """Read the deletion vector a manifest entry points at.

    ``offset``/``length`` are the entry's ``content_offset``/``content_size_in_bytes``;
    ``cardinality`` its ``record_count`` (checked when given).
    """
    data = read_blob_range(source, offset, length, path)
    return deserialize_dv(data, path if path is not None else _source_name(source), cardinality=cardinality)


def read_deletion_vectors(source: PuffinSource, path: str | None = None) -> list[DeletionVectorBlob]:
    """Every ``deletion-vector-v1`` blob of a Puffin file, checked against its properties."""
    path = path if path is not None else _source_name(source)
    footer = read_puffin_footer(source, path)
    result = []
    for blob in footer.blobs:
        if blob.type != DV_BLOB_TYPE:
            continue
        if blob.compression_codec is not None:
            raise CorruptDataError(
                f"deletion vector blob at offset {blob.offset} is compressed "
                f"({blob.compression_codec}); deletion-vector-v1 is never compressed",
                path,
            )
        referenced = blob.properties.get(REFERENCED_DATA_FILE)
        if not referenced:
            raise CorruptDataError(
                f"deletion vector blob at offset {blob.offset} has no '{REFERENCED_DATA_FILE}' property", path
            )
        cardinality = _cardinality_property(blob, path)
        vector = read_deletion_vector(source, blob.offset, blob.length, path, cardinality=cardinality)
        result.append(DeletionVectorBlob(referenced, cardinality, blob.offset, blob.length, vector))
    return result


# -- writing -------------------------------------------------------------------------------


class PuffinWriter:
    """Builds a Puffin file in memory: add blobs, then :meth:`finish` for the bytes."""

    def __init__(
        self,
        *,
        created_by: str | None = None,
        properties: Mapping[str, str] | None = None,
        compress_footer: bool = False,
    ) -> None:
        self._properties: dict[str, str] = {}
        if created_by is not None:
            self._properties[CREATED_BY] = created_by
        self._properties.update(_checked_string_map(properties or {}, "file properties"))
        self._compress_footer = compress_footer
        self._parts: list[bytes] = [PUFFIN_MAGIC]
        self._offset = len(PUFFIN_MAGIC)
        self._blobs: list[BlobMetadata] = []
        self._footer_size: int | None = None

    @property
    def blobs(self) -> list[BlobMetadata]:
        return list(self._blobs)

    @property
    def footer_size(self) -> int:
        if self._footer_size is None:
            raise ValidationError("the Puffin footer size is known only after finish()")
        return self._footer_size

    def add_blob(
        self,
        data: bytes,
        *,
        type: str,
        fields: Sequence[int],
        snapshot_id: int,
        sequence_number: int,
        properties: Mapping[str, str] | None = None,
        compression_codec: str | None = None,
    ) -> BlobMetadata:
        """Append a blob (compressing it with ``compression_codec``); returns its metadata."""
        if self._footer_size is not None:
            raise ValidationError("cannot add a blob to a finished Puffin file")
        if not all(_is_json_int(f) for f in fields):
            raise ValidationError(f"Puffin blob fields must be integer field ids: {list(fields)!r}")
        stored = bytes(data) if compression_codec is None else compress(bytes(data), compression_codec)
        blob = BlobMetadata(
            type=type,
            fields=tuple(fields),
            snapshot_id=snapshot_id,
            sequence_number=sequence_number,
            offset=self._offset,
            length=len(stored),
            compression_codec=compression_codec,
            properties=_checked_string_map(properties or {}, "blob properties"),
        )
        self._parts.append(stored)
        self._offset += len(stored)
        self._blobs.append(blob)
        return blob

    def finish(self) -> bytes:
        """The complete file: magic, blobs, footer."""
        if self._footer_size is not None:
            raise ValidationError("the Puffin file was already finished")
        metadata: dict[str, Any] = {"blobs": [blob.to_json() for blob in self._blobs]}
        if self._properties:
            metadata["properties"] = self._properties
        payload = json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        flags = 0
        if self._compress_footer:
            payload = compress(payload, _FOOTER_CODEC)
            flags |= _FLAG_FOOTER_COMPRESSED
        if len(payload) > _MAX_SIGNED_INT:
            raise UnsupportedError(f"Puffin footer payload of {len(payload)} bytes exceeds 2 GiB")
        footer = b"".join(
            (PUFFIN_MAGIC, payload, _LE_I32.pack(len(payload)), bytes((flags, 0, 0, 0)), PUFFIN_MAGIC)
        )
        self._footer_size = len(footer)
        return b"".join((*self._parts, footer))


def write_deletion_vectors(
    dvs: Iterable[tuple[str, DeletionVector]], created_by: str
) -> tuple[bytes, list[BlobMetadata]]:
    """A Puffin file of deletion vectors, one blob per ``(referenced data file, vector)``.

    Blob metadata as Iceberg Java writes it: type ``deletion-vector-v1``, fields
    ``[2147483645]`` (``_pos``), snapshot id and sequence number -1 ("not known at the
    time the Puffin file is created"), properties ``referenced-data-file`` and
    ``cardinality``, never compressed. A manifest entry for blob ``b`` uses
    ``content_offset = b.offset``, ``content_size_in_bytes = b.length`` and
    ``record_count = int(b.properties["cardinality"])``.
    """
    writer = PuffinWriter(created_by=created_by)
    seen: set[str] = set()
    for data_file, dv in dvs:
        if data_file in seen:
            raise ValidationError(f"more than one deletion vector for data file {data_file}")
        if not dv:
            raise ValidationError(f"the deletion vector for data file {data_file} is empty")
        seen.add(data_file)
        writer.add_blob(
            serialize_dv(dv),
            type=DV_BLOB_TYPE,
            fields=(ROW_POSITION_FIELD_ID,),
            snapshot_id=-1,
            sequence_number=-1,
            properties={REFERENCED_DATA_FILE: data_file, CARDINALITY: str(len(dv))},
        )
    return writer.finish(), writer.blobs


# -- compression ---------------------------------------------------------------------------

#: Puffin spec, "Compression codecs": "For maximal interoperability, other codecs are not supported."
SUPPORTED_CODECS = ("lz4", "zstd")


def compress(data: bytes, codec: str) -> bytes:
    """One LZ4 or Zstandard frame "with content size present"."""
    if codec == "lz4":
        import lz4.frame

        return lz4.frame.compress(data, store_size=True)
    if codec == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(write_content_size=True).compress(data)
    raise UnsupportedError(f"unsupported Puffin compression codec {codec!r} (supported: lz4, zstd)")


def decompress(data: bytes, codec: str, what: str, path: str | None = None) -> bytes:
    """Decompress exactly one frame; truncated frames and trailing bytes are corrupt."""
    if codec == "lz4":
        import lz4.frame

        decompressor: Any = lz4.frame.LZ4FrameDecompressor()
        errors: tuple[type[Exception], ...] = (RuntimeError,)
    elif codec == "zstd":
        import zstandard

        decompressor = zstandard.ZstdDecompressor().decompressobj()
        errors = (zstandard.ZstdError,)
    else:
        raise UnsupportedError(
            f"{path or 'Puffin file'}: {what} uses unsupported compression codec {codec!r} "
            "(supported: lz4, zstd)"
        )
    try:
        result = decompressor.decompress(data)
    except errors as exc:
        raise CorruptDataError(f"cannot decompress {codec} {what}: {exc}", path) from None
    if not decompressor.eof:
        raise CorruptDataError(f"{codec} {what} is truncated: its frame does not end", path)
    if decompressor.unused_data:
        raise CorruptDataError(
            f"{codec} {what} has {len(decompressor.unused_data)} bytes after its single frame", path
        )
    return result


# -- helpers -------------------------------------------------------------------------------


class _RangeReader:
    """Random access to bytes, a seekable binary file, or a local path (opened here)."""

    def __init__(self, source: PuffinSource, path: str | None, size: int | None) -> None:
        self.path = path if path is not None else _source_name(source)
        self._owned = None
        if isinstance(source, bytes | bytearray | memoryview):
            self._data: memoryview | None = memoryview(source).cast("B")
            self._file = None
            self.size = len(self._data)
            return
        self._data = None
        if isinstance(source, str | os.PathLike):
            # a location (path or file: URI); a missing file is an iceduck error naming it
            self._file = self._owned = fileio.open_input(os.fspath(source))  # closed in __exit__
        else:
            self._file = source
        self.size = size if size is not None else self._file.seek(0, os.SEEK_END)

    def __enter__(self) -> _RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owned is not None:
            self._owned.close()

    def read_at(self, offset: int, length: int) -> bytes:
        if self._data is not None:
            return bytes(self._data[offset : offset + length])
        assert self._file is not None
        self._file.seek(offset)
        data = self._file.read(length)
        if len(data) != length:
            raise CorruptDataError(
                f"file ended early: wanted {length} bytes at offset {offset}, got {len(data)}", self.path
            )
        return data


def _source_name(source: object) -> str | None:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else None


def _check_magic(found: bytes, where: str, path: str | None) -> None:
    if found != PUFFIN_MAGIC:
        raise CorruptDataError(
            f"bad Puffin magic at {where}: expected {PUFFIN_MAGIC!r}, found {bytes(found)!r}", path
        )


def _decode_flags(flags: bytes, path: str | None) -> bool:
    """Whether the footer payload is compressed; unknown flags are refused, as Java does."""
    unknown = int.from_bytes(flags, "little") & ~_FLAG_FOOTER_COMPRESSED
    if unknown:
        byte, bit = divmod((unknown & -unknown).bit_length() - 1, 8)
        raise UnsupportedError(
            f"{path or 'Puffin file'}: unknown Puffin footer flag set (byte {byte}, bit {bit}); "
            f"flags are {bytes(flags).hex()}"
        )
    return bool(flags[0] & _FLAG_FOOTER_COMPRESSED)


def _parse_footer_json(payload: bytes, path: str | None) -> dict[str, Any]:
    try:
        metadata = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptDataError(f"Puffin footer payload is not UTF-8 JSON: {exc}", path) from None
    if not isinstance(metadata, dict) or not isinstance(metadata.get("blobs"), list):
        raise CorruptDataError("Puffin footer JSON must be an object with a 'blobs' list", path)
    return metadata


def _is_json_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _required(obj: dict[str, Any], key: str, kind: type, path: str | None) -> Any:
    value = obj.get(key)
    ok = _is_json_int(value) if kind is int else isinstance(value, kind)
    if not ok:
        raise CorruptDataError(
            f"Puffin blob metadata needs '{key}' as a JSON {kind.__name__}, found {value!r}", path
        )
    return value


def _string_map(value: object, what: str, path: str | None) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise CorruptDataError(f"Puffin {what} must be a JSON object of strings: {value!r}", path)
    return dict(value)


def _checked_string_map(value: Mapping[str, str], what: str) -> dict[str, str]:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValidationError(f"Puffin {what} must map strings to strings: {dict(value)!r}")
    return dict(value)


def _cardinality_property(blob: BlobMetadata, path: str | None) -> int:
    text = blob.properties.get(CARDINALITY)
    if text is None or not (text.isascii() and text.isdigit()):
        raise CorruptDataError(
            f"deletion vector blob at offset {blob.offset} has no valid '{CARDINALITY}' property: {text!r}",
            path,
        )
    return int(text)

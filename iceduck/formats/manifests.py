"""Manifest files: Avro bytes <-> :class:`ManifestEntry` rows (spec: "Manifests").

Reading takes the partition spec and schema from the file's key-value metadata ("A
manifest file must store the partition spec and other metadata as properties in the Avro
file's key-value metadata") and the partition tuple's types from the file's own Avro
schema, then resolves inherited values unless ``inherit=False``:

* "Sequence Number Inheritance": null data/file sequence numbers of ADDED entries take the
  manifest's sequence number from the manifest list; "When reading v1 manifests with no
  sequence number column, sequence numbers for all files must default to 0" (Java also
  fills nulls with 0 when the manifest's sequence number is 0, i.e. a v1 manifest);
* a null ``snapshot_id`` takes the manifest's ``added_snapshot_id``;
* "First Row ID Inheritance": a null ``first_row_id`` of a data file becomes "the
  manifest's ``first_row_id`` plus the sum of ``record_count`` for all data files that
  preceded the file in the manifest that also had a null ``first_row_id``". As in Java
  1.10 (``ManifestReader.idAssigner``) DELETED entries neither take nor consume ids, and
  when a committed manifest has no ``first_row_id`` its files have none either ("When
  ``first_row_id`` is null, inherited row ID values are also null").

Records are read by field id (:func:`iceduck.formats.avro_files.read_avro` projects the
file's schema onto :func:`iceduck.formats.avro_schemas.manifest_entry_read_type`), the
partition tuple as the file wrote it.

``inherit=False`` keeps what is stored, which is what a faithful rewrite needs.

Writing lives in :mod:`iceduck.formats.manifest_writer` (re-exported here). Java does
not write the ``schema-id`` key although the spec lists it as required for v2, so iceduck
does not require it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

from iceduck.errors import CorruptDataError, IceduckError, UnsupportedError
from iceduck.formats import avro_schemas
from iceduck.formats.avro_files import AvroInput, read_avro
from iceduck.formats.manifest_writer import (
    DEFAULT_BLOCK_SIZE,
    UNASSIGNED_SEQ,
    write_manifest,
    write_manifest_raw,
)
from iceduck.formats.schema_json import partition_fields_from_json, schema_from_json
from iceduck.spec import values
from iceduck.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.types import DecimalType, StructType, UUIDType

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "UNASSIGNED_SEQ",
    "ManifestMeta",
    "ManifestRead",
    "manifest_meta",
    "parse_format_version",
    "read_manifest",
    "rewrite_manifest",
    "write_manifest",
    "write_manifest_raw",
]

_CONTENT_NAMES = {"data": ManifestContent.DATA, "deletes": ManifestContent.DELETES}
_STATUS = {s.value: s for s in EntryStatus}
_FILE_CONTENT = {c.value: c for c in FileContent}
_FORMATS = {**{f.name: f for f in FileFormat}, **{f.value: f for f in FileFormat}}
_READ_TYPE = avro_schemas.manifest_entry_read_type()
_KEPT = frozenset({avro_schemas.PARTITION_FIELD_ID})


@dataclass
class ManifestMeta:
    """A manifest's key-value metadata, parsed (the table schema lazily: planning rarely needs it)."""

    path: str
    format_version: int
    content: ManifestContent
    spec_id: int
    spec: PartitionSpec
    #: the partition tuple type, from the file's own Avro schema
    partition_type: StructType
    schema_json: str
    partition_spec_json: str
    #: every key-value pair of the Avro header (``avro.schema``/``avro.codec`` included)
    properties: dict[str, str] = field(repr=False)
    #: the file's Avro schema, its fields named as the reader expects (matched by field id)
    avro_schema: dict[str, Any] = field(repr=False)

    @cached_property
    def schema(self) -> Schema:
        """The table schema the manifest was written with."""
        try:
            obj = json.loads(self.schema_json)
        except json.JSONDecodeError as e:
            raise CorruptDataError(f"manifest metadata 'schema' is not valid JSON: {e}", self.path) from e
        return schema_from_json(obj, "manifest metadata 'schema'", self.path)


class ManifestRead(NamedTuple):
    """What :func:`read_manifest` returns: ``meta, entries = read_manifest(...)``."""

    meta: ManifestMeta
    entries: list[ManifestEntry]


# -- reading -------------------------------------------------------------------------------


def read_manifest(
    data: AvroInput,
    path: str,
    manifest: ManifestFile | None = None,
    specs_by_id: dict[int, PartitionSpec] | None = None,
    *,
    inherit: bool = True,
) -> ManifestRead:
    """Read a manifest; ``manifest`` is its manifest-list row (the source of inherited
    values), ``specs_by_id`` the table's specs (saves parsing the spec JSON)."""
    contents = read_avro(data, path, _READ_TYPE, _KEPT)
    meta = manifest_meta(contents.metadata, contents.read_schema, path, manifest, specs_by_id)
    entries = _entries(contents.records, meta)
    if inherit:
        _inherit(entries, meta, manifest)
    return ManifestRead(meta, entries)


def parse_format_version(text: str | None, path: str, default: int = 1) -> int:
    """The ``format-version`` metadata value: absent means ``default`` (optional in v1)."""
    if text is None:
        return default
    try:
        version = int(text)
    except ValueError:
        raise CorruptDataError(f"invalid format-version {text!r}", path) from None
    if version not in avro_schemas.SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedError(f"{path}: Iceberg format version {version} is not supported (1, 2 or 3 are)")
    return version


def manifest_meta(
    metadata: dict[str, str],
    avro_schema: dict[str, Any],
    path: str,
    manifest: ManifestFile | None = None,
    specs_by_id: dict[int, PartitionSpec] | None = None,
) -> ManifestMeta:
    """Parse and check the key-value metadata the spec requires of a manifest."""
    version = parse_format_version(metadata.get("format-version"), path)
    required = (
        ("schema", "partition-spec") if version == 1 else ("schema", "partition-spec", "partition-spec-id")
    )
    for key in (*required, *(("content",) if version >= 2 else ())):
        if key not in metadata:
            raise CorruptDataError(f"manifest key-value metadata lacks required {key!r}", path)
    content = ManifestContent.DATA
    if version >= 2:
        content_name = metadata["content"]
        if content_name not in _CONTENT_NAMES:
            raise CorruptDataError(
                f"invalid manifest content {content_name!r} (expected data or deletes)", path
            )
        content = _CONTENT_NAMES[content_name]
    if "partition-spec-id" in metadata:
        spec_id = _parse_int(metadata["partition-spec-id"], "partition-spec-id", path)
    else:
        spec_id = manifest.partition_spec_id if manifest is not None else 0
    partition_type = avro_schemas.partition_type_from_avro(avro_schema, path)
    spec = (specs_by_id or {}).get(spec_id)
    if spec is None:
        spec = _parse_spec(metadata["partition-spec"], spec_id, path)
    if len(spec.fields) != len(partition_type.fields):
        raise CorruptDataError(
            f"partition spec {spec_id} has {len(spec.fields)} fields but the manifest's partition "
            f"tuple has {len(partition_type.fields)}",
            path,
        )
    return ManifestMeta(
        path=path,
        format_version=version,
        content=content,
        spec_id=spec_id,
        spec=spec,
        partition_type=partition_type,
        schema_json=metadata["schema"],
        partition_spec_json=metadata["partition-spec"],
        properties=metadata,
        avro_schema=avro_schema,
    )


def _parse_int(text: str, key: str, path: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CorruptDataError(f"invalid {key} {text!r}", path) from None


def _parse_spec(text: str, spec_id: int, path: str) -> PartitionSpec:
    try:
        fields = json.loads(text)
    except json.JSONDecodeError as e:
        raise CorruptDataError(f"manifest metadata 'partition-spec' is not valid JSON: {e}", path) from e
    return partition_fields_from_json(fields, spec_id, "manifest metadata 'partition-spec'", path)


def _partition_readers(partition_type: StructType) -> list[tuple[int, Callable[[Any], Any]]]:
    """Converters for the partition fields whose Avro value is not iceduck's value already
    (decimal: fixed bytes -> Decimal; uuid: fixed bytes -> UUID). The rest are left alone."""
    out: list[tuple[int, Callable[[Any], Any]]] = []
    for i, f in enumerate(partition_type.fields):
        t = f.field_type
        if isinstance(t, DecimalType):
            out.append((i, _decimal_reader(t)))
        elif isinstance(t, UUIDType):
            out.append((i, _read_uuid))
    return out


def _decimal_reader(t: DecimalType) -> Callable[[Any], Any]:
    return lambda v: None if v is None else values.from_bytes(t, v)


def _read_uuid(value: Any) -> uuid.UUID | None:
    if value is None:
        return None
    return uuid.UUID(value) if isinstance(value, str) else uuid.UUID(bytes=value)


def _kv(pairs: list[dict[str, Any]] | None) -> dict[int, Any] | None:
    return None if pairs is None else {p["key"]: p["value"] for p in pairs}


def _entries(records: list[dict[str, Any]], meta: ManifestMeta) -> list[ManifestEntry]:
    """Records to entries, as stored. The hot loop of planning: per entry it does only the
    unavoidable work (maps from key/value pairs, enum lookups, a tuple of partition values)."""
    readers = _partition_readers(meta.partition_type)
    spec_id = meta.spec_id
    path = meta.path
    out = []
    try:
        for rec in records:
            df = rec["data_file"]
            partition = tuple(df["partition"].values())
            if readers:
                converted = list(partition)
                for i, read in readers:
                    converted[i] = read(converted[i])
                partition = tuple(converted)
            content = _FILE_CONTENT[df.get("content", 0)]
            data_file = DataFile(
                content=content,
                file_path=df["file_path"],
                file_format=_file_format(df["file_format"], path),
                partition=partition,
                record_count=df["record_count"],
                file_size_in_bytes=df["file_size_in_bytes"],
                column_sizes=_kv(df.get("column_sizes")),
                value_counts=_kv(df.get("value_counts")),
                null_value_counts=_kv(df.get("null_value_counts")),
                nan_value_counts=_kv(df.get("nan_value_counts")),
                lower_bounds=_kv(df.get("lower_bounds")),
                upper_bounds=_kv(df.get("upper_bounds")),
                key_metadata=df.get("key_metadata"),
                split_offsets=df.get("split_offsets"),
                equality_ids=df.get("equality_ids"),
                sort_order_id=df.get("sort_order_id"),
                first_row_id=df.get("first_row_id"),
                referenced_data_file=df.get("referenced_data_file"),
                content_offset=df.get("content_offset"),
                content_size_in_bytes=df.get("content_size_in_bytes"),
                spec_id=spec_id,
                block_size_in_bytes=df.get("block_size_in_bytes"),
                distinct_counts=_kv(df.get("distinct_counts")),
            )
            out.append(
                ManifestEntry(
                    status=_STATUS[rec["status"]],
                    snapshot_id=rec.get("snapshot_id"),
                    data_file=data_file,
                    sequence_number=rec.get("sequence_number"),
                    file_sequence_number=rec.get("file_sequence_number"),
                )
            )
    except KeyError as e:
        raise CorruptDataError(
            f"manifest entry {len(out)} lacks a required field or has an invalid enum value: {e}", path
        ) from e
    except IceduckError as e:
        raise CorruptDataError(f"manifest entry {len(out)}: {e}", path) from e
    _check_content(out, meta)
    return out


def _file_format(text: str, path: str) -> FileFormat:
    found = _FORMATS.get(text)
    if found is None:
        try:
            return FileFormat.parse(text)
        except ValueError:
            raise CorruptDataError(f"unknown file_format {text!r}", path) from None
    return found


def _check_content(entries: list[ManifestEntry], meta: ManifestMeta) -> None:
    """Spec: "A manifest may store either data files or delete files, but not both"."""
    want_data = meta.content is ManifestContent.DATA
    for i, e in enumerate(entries):
        if (e.data_file.content is FileContent.DATA) != want_data:
            raise CorruptDataError(
                f"entry {i} is a {e.data_file.content.name} file in a {meta.content.name} manifest", meta.path
            )


def _inherit(entries: list[ManifestEntry], meta: ManifestMeta, manifest: ManifestFile | None) -> None:
    """Resolve inherited values in place (rules: module docstring; Java's
    ``InheritableMetadataFactory`` and ``ManifestReader.idAssigner``)."""
    if meta.format_version == 1:
        for e in entries:
            e.sequence_number = 0 if e.sequence_number is None else e.sequence_number
            e.file_sequence_number = 0 if e.file_sequence_number is None else e.file_sequence_number
    if manifest is None:
        return
    snapshot_id = manifest.added_snapshot_id
    seq = manifest.sequence_number
    committed = seq != UNASSIGNED_SEQ
    for e in entries:
        if e.snapshot_id is None:
            e.snapshot_id = snapshot_id
        if committed and (seq == 0 or e.status is EntryStatus.ADDED):
            if e.sequence_number is None:
                e.sequence_number = seq
            if e.file_sequence_number is None:
                e.file_sequence_number = seq
    if meta.content is not ManifestContent.DATA:
        return
    if manifest.first_row_id is not None:
        next_row_id = manifest.first_row_id
        for e in entries:
            df = e.data_file
            if e.status is not EntryStatus.DELETED and df.first_row_id is None:
                df.first_row_id = next_row_id
                next_row_id += df.record_count
    elif committed:
        for e in entries:
            e.data_file.first_row_id = None


def rewrite_manifest(data: AvroInput, path: str) -> bytes:
    """Read a manifest as stored (no inheritance) and write it back with iceduck's writer.

    For round-trip checks against files Iceberg Java wrote: the result must carry the same
    Avro schema, key-value metadata (``schema`` and ``partition-spec`` are kept verbatim)
    and records.
    """
    meta, entries = read_manifest(data, path, inherit=False)
    out, _ = write_manifest_raw(
        entries,
        partition_type=meta.partition_type,
        spec_id=meta.spec_id,
        schema_json=meta.schema_json,
        partition_spec_json=meta.partition_spec_json,
        format_version=meta.format_version,
        content=meta.content,
        path=path,
    )
    return out

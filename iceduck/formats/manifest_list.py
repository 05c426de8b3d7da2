"""Manifest lists: Avro bytes <-> :class:`ManifestFile` rows (spec: "Manifest Lists").

Reading v1 lists follows "Reading v1 metadata for v2": "Manifest list field
``sequence-number`` must default to 0", "``min-sequence-number`` must default to 0",
"``content`` must default to 0 (data)"; v1 counts may be null ("when null is assumed to
be non-zero").

Writing follows Iceberg Java 1.10's ``ManifestListWriter``: key-value metadata
``snapshot-id``, ``parent-snapshot-id`` (the text ``null`` for a snapshot without parent,
as Java's ``String.valueOf`` writes it), ``sequence-number`` (v2+), ``first-row-id``
(v3), ``format-version`` and ``iceberg.schema``. "When a manifest list is written, the
(optimistic) sequence number of the snapshot is written for all new manifest files
tracked by the list": rows whose sequence numbers are :data:`UNASSIGNED_SEQ` get the
snapshot's. In v3 data manifests without ``first_row_id`` are assigned one ("First Row ID
Assignment").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import CorruptDataError, ValidationError
from iceduck.formats import avro_schemas
from iceduck.formats.avro_files import AvroInput, read_avro, write_avro
from iceduck.formats.manifests import UNASSIGNED_SEQ, parse_format_version
from iceduck.spec.manifest import FieldSummary, ManifestContent, ManifestFile

_MANIFEST_CONTENT = {c.value: c for c in ManifestContent}
#: what a list's records are read as, by field id (older writers' names differ: Java up to
#: 1.4 wrote 504-506 as ``added_data_files_count``, ``existing_data_files_count``, ...)
_READ_TYPE = avro_schemas.manifest_file_read_type()


@dataclass(frozen=True)
class ManifestList:
    """A decoded manifest list: its key-value metadata and its rows."""

    format_version: int
    snapshot_id: int | None
    parent_snapshot_id: int | None
    #: absent in v1 lists
    sequence_number: int | None
    #: v3 only
    first_row_id: int | None
    manifests: list[ManifestFile]
    properties: dict[str, str] = field(repr=False)


# -- reading -------------------------------------------------------------------------------


def read_manifest_list(
    data: AvroInput, path: str, format_version_hint: int | None = None
) -> list[ManifestFile]:
    """The manifest-list rows of a snapshot."""
    return open_manifest_list(data, path, format_version_hint).manifests


def open_manifest_list(data: AvroInput, path: str, format_version_hint: int | None = None) -> ManifestList:
    """Decode a manifest list with its metadata.

    The format version comes from the ``format-version`` metadata, else from
    ``format_version_hint`` (the table's), else from the schema (a ``sequence_number``
    field means v2, ``first_row_id`` v3; matched by field id as every field is).
    """
    contents = read_avro(data, path, _READ_TYPE)
    meta = contents.metadata
    names = {f.get("name") for f in contents.read_schema.get("fields", [])}
    inferred = 3 if "first_row_id" in names else 2 if "sequence_number" in names else 1
    version = parse_format_version(meta.get("format-version"), path, format_version_hint or inferred)
    manifests = [_manifest_file(rec, i, path) for i, rec in enumerate(contents.records)]
    return ManifestList(
        format_version=version,
        snapshot_id=_optional_long(meta, "snapshot-id", path),
        parent_snapshot_id=_optional_long(meta, "parent-snapshot-id", path),
        sequence_number=_optional_long(meta, "sequence-number", path),
        first_row_id=_optional_long(meta, "first-row-id", path),
        manifests=manifests,
        properties=meta,
    )


def _optional_long(meta: dict[str, str], key: str, path: str) -> int | None:
    text = meta.get(key)
    if text is None or text == "null":
        return None
    try:
        return int(text)
    except ValueError:
        raise CorruptDataError(f"invalid {key} {text!r} in manifest list metadata", path) from None


def _manifest_file(rec: dict[str, Any], index: int, path: str) -> ManifestFile:
    try:
        content = _MANIFEST_CONTENT[rec.get("content", 0)]
        sequence_number = rec.get("sequence_number")
        min_sequence_number = rec.get("min_sequence_number")
        partitions = rec.get("partitions")
        return ManifestFile(
            manifest_path=rec["manifest_path"],
            manifest_length=rec["manifest_length"],
            partition_spec_id=rec["partition_spec_id"],
            content=content,
            sequence_number=0 if sequence_number is None else sequence_number,
            min_sequence_number=0 if min_sequence_number is None else min_sequence_number,
            added_snapshot_id=rec["added_snapshot_id"],
            added_files_count=rec.get("added_files_count"),
            existing_files_count=rec.get("existing_files_count"),
            deleted_files_count=rec.get("deleted_files_count"),
            added_rows_count=rec.get("added_rows_count"),
            existing_rows_count=rec.get("existing_rows_count"),
            deleted_rows_count=rec.get("deleted_rows_count"),
            partitions=None if partitions is None else [_summary(p) for p in partitions],
            key_metadata=rec.get("key_metadata"),
            first_row_id=rec.get("first_row_id"),
        )
    except KeyError as e:
        raise CorruptDataError(
            f"manifest list row {index} has a missing field or invalid value: {e!r}", path
        ) from e


def _summary(rec: dict[str, Any]) -> FieldSummary:
    return FieldSummary(
        rec["contains_null"], rec.get("contains_nan"), rec.get("lower_bound"), rec.get("upper_bound")
    )


# -- writing -------------------------------------------------------------------------------


def assign_first_row_ids(
    manifests: Iterable[ManifestFile], first_row_id: int
) -> tuple[list[ManifestFile], int]:
    """Assign ``first_row_id`` to data manifests lacking one; returns the rows and the next row id.

    "The ``first_row_id`` for existing manifests must be preserved [...] The value of
    ``first_row_id`` for delete manifests is always ``null``"; "A simple and valid approach
    is to estimate the number of rows in data files that will be assigned a
    ``first_row_id`` using the manifest's ``added_rows_count`` and ``existing_rows_count``"
    (what Java does). ``next - first_row_id`` is the snapshot's ``added-rows``.
    """
    out = []
    next_row_id = first_row_id
    for m in manifests:
        if m.content is not ManifestContent.DATA:
            out.append(m if m.first_row_id is None else dataclasses.replace(m, first_row_id=None))
        elif m.first_row_id is not None:
            out.append(m)
        else:
            if m.added_rows_count is None or m.existing_rows_count is None:
                raise ValidationError(f"manifest {m.manifest_path} lacks row counts to assign row ids")
            out.append(dataclasses.replace(m, first_row_id=next_row_id))
            next_row_id += m.added_rows_count + m.existing_rows_count
    return out, next_row_id


def write_manifest_list(
    manifests: Iterable[ManifestFile],
    format_version: int,
    snapshot_id: int,
    parent_snapshot_id: int | None,
    sequence_number: int | None,
    first_row_id: int | None = None,
) -> bytes:
    """Write the manifest list of snapshot ``snapshot_id``.

    ``sequence_number`` is the snapshot's (ignored in v1); ``first_row_id`` is the
    snapshot's ``first-row-id``, required in v3 (use :func:`assign_first_row_ids` first to
    learn the next row id; already assigned rows are kept).
    """
    avro_schemas.check_format_version(format_version)
    rows = list(manifests)
    parent = "null" if parent_snapshot_id is None else str(parent_snapshot_id)
    metadata = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": parent}
    if format_version >= 2:
        if sequence_number is None or sequence_number < 0:
            raise ValidationError(f"a v{format_version} manifest list needs the snapshot's sequence number")
        metadata["sequence-number"] = str(sequence_number)
        rows = [_assign_sequence_number(m, snapshot_id, sequence_number) for m in rows]
    if format_version >= 3:
        if first_row_id is None:
            raise ValidationError("a v3 manifest list needs the snapshot's first-row-id")
        metadata["first-row-id"] = str(first_row_id)
        rows, _ = assign_first_row_ids(rows, first_row_id)
    metadata["format-version"] = str(format_version)
    file_type = avro_schemas.manifest_file_type(format_version)
    metadata["iceberg.schema"] = avro_schemas.iceberg_schema_json(file_type)
    records = [_record(m, format_version) for m in rows]
    return write_avro(
        avro_schemas.struct_to_avro(file_type, avro_schemas.MANIFEST_FILE_RECORD), records, metadata
    )


def _assign_sequence_number(m: ManifestFile, snapshot_id: int, sequence_number: int) -> ManifestFile:
    """Java ``V2Metadata.ManifestFileWrapper``: unassigned sequence numbers become the
    snapshot's, but only for manifests the committing snapshot added."""
    seq, min_seq = m.sequence_number, m.min_sequence_number
    if UNASSIGNED_SEQ not in (seq, min_seq):
        return m
    if m.added_snapshot_id != snapshot_id:
        raise ValidationError(
            f"manifest {m.manifest_path} of snapshot {m.added_snapshot_id} has no sequence number "
            f"(only manifests added by snapshot {snapshot_id} may inherit one)"
        )
    return dataclasses.replace(
        m,
        sequence_number=sequence_number if seq == UNASSIGNED_SEQ else seq,
        min_sequence_number=sequence_number if min_seq == UNASSIGNED_SEQ else min_seq,
    )


def _record(m: ManifestFile, format_version: int) -> dict[str, Any]:
    if format_version == 1 and m.content is not ManifestContent.DATA:
        raise ValidationError(f"cannot store delete manifest {m.manifest_path} in a v1 manifest list")
    if m.added_snapshot_id < 0:
        raise ValidationError(f"manifest {m.manifest_path} has no added_snapshot_id")
    record: dict[str, Any] = {
        "manifest_path": m.manifest_path,
        "manifest_length": m.manifest_length,
        "partition_spec_id": m.partition_spec_id,
        "added_snapshot_id": m.added_snapshot_id,
        "added_files_count": m.added_files_count,
        "existing_files_count": m.existing_files_count,
        "deleted_files_count": m.deleted_files_count,
        "added_rows_count": m.added_rows_count,
        "existing_rows_count": m.existing_rows_count,
        "deleted_rows_count": m.deleted_rows_count,
        "partitions": None if m.partitions is None else [_summary_record(s) for s in m.partitions],
        "key_metadata": m.key_metadata,
    }
    if format_version >= 2:
        missing = [k for k, v in record.items() if k.endswith("_count") and v is None]
        if missing:
            raise ValidationError(f"manifest {m.manifest_path} lacks {', '.join(missing)} (required from v2)")
        record["content"] = int(m.content)
        record["sequence_number"] = m.sequence_number
        record["min_sequence_number"] = m.min_sequence_number
    if format_version >= 3:
        record["first_row_id"] = m.first_row_id if m.content is ManifestContent.DATA else None
    return record


def _summary_record(s: FieldSummary) -> dict[str, Any]:
    return {
        "contains_null": s.contains_null,
        "contains_nan": s.contains_nan,
        "lower_bound": s.lower_bound,
        "upper_bound": s.upper_bound,
    }


def rewrite_manifest_list(data: AvroInput, path: str) -> bytes:
    """Read a manifest list and write it back with iceduck's writer (round-trip checks):
    same schema, key-value metadata and records as the input when Java wrote it."""
    listing = open_manifest_list(data, path)
    if listing.snapshot_id is None:
        raise CorruptDataError("manifest list metadata lacks snapshot-id", path)
    return write_manifest_list(
        listing.manifests,
        listing.format_version,
        listing.snapshot_id,
        listing.parent_snapshot_id,
        listing.sequence_number,
        listing.first_row_id,
    )

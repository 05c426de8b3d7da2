"""Paimon's Avro metadata files: manifest lists, data manifests and index manifests.

All three live in ``<table>/manifest/`` and are Avro object container files (Paimon's
default ``manifest.compression`` is zstd, which :func:`iceduck.formats.avro_files.read_avro`
decodes). Their fields are seed 004's ("Manifest List", "Data Manifest", "Index Manifest",
"SimpleStats"), each record starting with ``_VERSION``. Writers add fields over time, so
only the fields the seed lists as the core of each record are required; any other one
may be missing (older Java Paimon 0.8-1.x writers) and is then None. A record that lacks
a required field, or holds a value of the wrong kind, raises :class:`CorruptDataError`
naming the file.
"""

from __future__ import annotations

from typing import Any

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.avro_files import read_avro
from iceduck.formats.paimon.paths import table_path
from iceduck.io.fileio import read_bytes
from iceduck.spec.paimon.fields import opt_bytes, opt_int, opt_str, opt_strs, req_bytes, req_int, req_str
from iceduck.spec.paimon.manifest import (
    DataFileMeta,
    DeletionVectorRange,
    FileKind,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)

#: ``_VERSION`` of manifest entries and manifest list rows Java writes since 0.5
#: (``ManifestEntrySerializer``/``ManifestFileMetaSerializer``); version 1 files must be
#: recreated ("please recreate the table"), as Java says
DATA_VERSION = 2
#: ``_VERSION`` of index manifest entries (``IndexManifestEntrySerializer``)
INDEX_VERSION = 1


def manifest_path(table: str, file_name: str) -> str:
    return table_path(table, "manifest", file_name)


def _records(location: str) -> list[dict[str, Any]]:
    records = read_avro(read_bytes(location), location).records
    for record in records:
        if not isinstance(record, dict):
            raise CorruptDataError("a record is not an Avro record", location)
    return records


def read_manifest_list(table: str, file_name: str) -> list[ManifestFileMeta]:
    """The rows of ``<table>/manifest/<file_name>``, a manifest list."""
    location = manifest_path(table, file_name)
    return [_manifest_file_meta(r, location) for r in _records(location)]


def read_manifest(table: str, file_name: str) -> list[ManifestEntry]:
    """The entries of ``<table>/manifest/<file_name>``, a data manifest, in file order."""
    location = manifest_path(table, file_name)
    return [_manifest_entry(r, location) for r in _records(location)]


def read_index_manifest(table: str, file_name: str) -> list[IndexManifestEntry]:
    """The entries of ``<table>/manifest/<file_name>``, an index manifest."""
    location = manifest_path(table, file_name)
    return [_index_entry(r, location) for r in _records(location)]


def _version(record: dict[str, Any], expected: int, path: str) -> None:
    version = record.get("_VERSION")
    if version is not None and version != expected:
        raise UnsupportedError(
            f"{path}: Paimon metadata record version {version} is not supported (expected {expected}); "
            "Paimon itself cannot read it either: recreate the table"
        )


def _manifest_file_meta(record: dict[str, Any], path: str) -> ManifestFileMeta:
    _version(record, DATA_VERSION, path)
    return ManifestFileMeta(
        file_name=req_str(record, "_FILE_NAME", path),
        file_size=req_int(record, "_FILE_SIZE", path),
        num_added_files=req_int(record, "_NUM_ADDED_FILES", path),
        num_deleted_files=req_int(record, "_NUM_DELETED_FILES", path),
        partition_stats=_stats(record, "_PARTITION_STATS", path),
        schema_id=req_int(record, "_SCHEMA_ID", path),
        min_bucket=opt_int(record, "_MIN_BUCKET", path),
        max_bucket=opt_int(record, "_MAX_BUCKET", path),
        min_level=opt_int(record, "_MIN_LEVEL", path),
        max_level=opt_int(record, "_MAX_LEVEL", path),
        min_row_id=opt_int(record, "_MIN_ROW_ID", path),
        max_row_id=opt_int(record, "_MAX_ROW_ID", path),
    )


def _manifest_entry(record: dict[str, Any], path: str) -> ManifestEntry:
    _version(record, DATA_VERSION, path)
    raw_file = record.get("_FILE")
    if not isinstance(raw_file, dict):
        raise CorruptDataError("a manifest entry has no _FILE record", path)
    return ManifestEntry(
        kind=_kind(record, path),
        partition=req_bytes(record, "_PARTITION", path),
        bucket=req_int(record, "_BUCKET", path),
        total_buckets=req_int(record, "_TOTAL_BUCKETS", path),
        file=_data_file(raw_file, path),
    )


def _data_file(record: dict[str, Any], path: str) -> DataFileMeta:
    return DataFileMeta(
        file_name=req_str(record, "_FILE_NAME", path),
        file_size=req_int(record, "_FILE_SIZE", path),
        row_count=req_int(record, "_ROW_COUNT", path),
        min_key=req_bytes(record, "_MIN_KEY", path),
        max_key=req_bytes(record, "_MAX_KEY", path),
        key_stats=_stats(record, "_KEY_STATS", path),
        value_stats=_stats(record, "_VALUE_STATS", path),
        min_sequence_number=req_int(record, "_MIN_SEQUENCE_NUMBER", path),
        max_sequence_number=req_int(record, "_MAX_SEQUENCE_NUMBER", path),
        schema_id=req_int(record, "_SCHEMA_ID", path),
        level=req_int(record, "_LEVEL", path),
        extra_files=opt_strs(record, "_EXTRA_FILES", path) or (),
        creation_time_ms=opt_int(record, "_CREATION_TIME", path),
        delete_row_count=opt_int(record, "_DELETE_ROW_COUNT", path),
        embedded_index=opt_bytes(record, "_EMBEDDED_FILE_INDEX", path),
        file_source=opt_int(record, "_FILE_SOURCE", path),
        value_stats_cols=opt_strs(record, "_VALUE_STATS_COLS", path),
        external_path=opt_str(record, "_EXTERNAL_PATH", path),
        first_row_id=opt_int(record, "_FIRST_ROW_ID", path),
        write_cols=opt_strs(record, "_WRITE_COLS", path),
    )


def _index_entry(record: dict[str, Any], path: str) -> IndexManifestEntry:
    _version(record, INDEX_VERSION, path)
    ranges = record.get("_DELETIONS_VECTORS_RANGES")
    if ranges is None:  # the field's spelling in some writers
        ranges = record.get("_DELETION_VECTORS_RANGES")
    dv_ranges: tuple[DeletionVectorRange, ...] | None = None
    if ranges is not None:
        if not isinstance(ranges, list):
            raise CorruptDataError("_DELETIONS_VECTORS_RANGES is not an array", path)
        dv_ranges = tuple(_dv_range(r, path) for r in ranges)
    return IndexManifestEntry(
        kind=_kind(record, path),
        partition=req_bytes(record, "_PARTITION", path),
        bucket=req_int(record, "_BUCKET", path),
        index_type=req_str(record, "_INDEX_TYPE", path),
        file_name=req_str(record, "_FILE_NAME", path),
        file_size=req_int(record, "_FILE_SIZE", path),
        row_count=req_int(record, "_ROW_COUNT", path),
        dv_ranges=dv_ranges,
        external_path=opt_str(record, "_EXTERNAL_PATH", path),
    )


def _dv_range(record: Any, path: str) -> DeletionVectorRange:
    if not isinstance(record, dict):
        raise CorruptDataError("a deletion vector range is not a record", path)
    offset, length = req_int(record, "f1", path), req_int(record, "f2", path)
    if offset < 0 or length < 0:
        raise CorruptDataError(f"a deletion vector range has offset {offset} and length {length}", path)
    return DeletionVectorRange(
        data_file=req_str(record, "f0", path),
        offset=offset,
        length=length,
        cardinality=opt_int(record, "_CARDINALITY", path),
    )


def _kind(record: dict[str, Any], path: str) -> FileKind:
    value = req_int(record, "_KIND", path)
    try:
        return FileKind(value)
    except ValueError:
        raise CorruptDataError(f"_KIND is {value}, neither 0 (ADD) nor 1 (DELETE)", path) from None


def _stats(record: dict[str, Any], key: str, path: str) -> SimpleStats:
    value = record.get(key)
    if not isinstance(value, dict):
        raise CorruptDataError(f"{key} is missing or not a record", path)
    counts = value.get("_NULL_COUNTS")
    if counts is not None and (
        not isinstance(counts, list) or not all(c is None or type(c) is int for c in counts)
    ):
        raise CorruptDataError(f"{key}._NULL_COUNTS is not an array of longs", path)
    return SimpleStats(
        min_values=req_bytes(value, "_MIN_VALUES", path),
        max_values=req_bytes(value, "_MAX_VALUES", path),
        null_counts=tuple(counts) if counts is not None else None,
    )

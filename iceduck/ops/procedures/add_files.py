"""``CALL system.add_files(table, source_table, partition_filter, check_duplicate_files,
parallelism)``: make existing Parquet files part of a table without rewriting them.

The files stay where they are and become data files of one ``append`` snapshot (Java's
``SparkTableUtil`` import): nothing is copied, and the table owns them from then on (a
later ``DELETE`` or ``expire_snapshots`` may delete them, as any data file). Each file's
metrics come from its footer, by field id (:mod:`iceduck.formats.parquet_metrics`, with
the table's metrics modes). Files are imported unsorted (sort order 0), as Java does.

Field ids: "Columns in Iceberg data files are selected by field id"; files written by
another tool usually have none, and "Name mapping [...] is used to map field names to
field ids when a data file does not have field ids". So, as Java's ``add_files`` does, a
table without ``schema.name-mapping.default`` gets one built from its current schema
(:mod:`iceduck.spec.name_mapping`), here in the same commit as the files. A file with
field ids must use the table's: one naming an id the table does not have is refused. A
file whose columns match none of the table's, or that lacks a required column (one an
identity partition does not supply), is refused too: it could only read as nulls.

Partitioned tables take Hive-style ``name=value`` folders (identity partitions only;
:mod:`iceduck.ops.procedures.import_files`). ``check_duplicate_files`` (default true)
refuses files the current snapshot already references; it is checked again on every
commit attempt, so two concurrent imports of the same file cannot both land.
``parallelism`` (default 1) is how many threads read footers.

Spark's result: ``added_files_count`` and ``changed_partition_count``, both read from the
new snapshot's summary (``added-data-files``, ``changed-partition-count``). Spark's
import of a path commits manifests it wrote itself and its summary then has no
partition count (null); iceduck's summary has it, so the column holds the count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.catalog.base import LoadedTable
from iceduck.engine.layout import MappedField, parse_name_mapping
from iceduck.errors import CorruptDataError, UserError, ValidationError
from iceduck.formats.parquet_metrics import file_metrics, leaf_field_ids, parquet_data_file
from iceduck.io.fileio import file_size, open_input, storage_errors
from iceduck.io.object_store import is_object_store
from iceduck.ops.context import OpContext
from iceduck.ops.procedures import import_files as source
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.scan.reachable import key
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile
from iceduck.spec.name_mapping import name_mapping_json
from iceduck.spec.snapshot import Operation
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.snapshot import SnapshotChanges, produce

_FIELD_ID = b"PARQUET:field_id"
#: Java lists at most this many of the duplicate files in its refusal
_DUPLICATES_SHOWN = 10


def _mapping(metadata: TableMetadata) -> tuple[str, bool]:
    """The name mapping the files are read with, and whether the commit must set it."""
    text = metadata.properties.get(props.SCHEMA_NAME_MAPPING)
    if text is not None:
        return text, False
    return name_mapping_json(metadata.schema()), True


def _lookup(mapping: Iterable[MappedField], name: str) -> MappedField | None:
    for m in mapping:
        if name in m.names:
            return m
    return None


def mapped_column_ids(schema: pa.Schema, mapping: tuple[MappedField, ...]) -> dict[str, int]:
    """Parquet column path -> field id, for a file without ids, through the name mapping
    (list elements through ``element``, map keys and values through ``key``/``value``)."""
    out: dict[str, int] = {}

    def walk(f: pa.Field, path: str, m: MappedField | None) -> None:
        t, sub = f.type, (m.fields if m is not None else ())
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                child = t.field(i)
                walk(child, f"{path}.{child.name}", _lookup(sub, child.name))
        elif pa.types.is_map(t):
            walk(t.key_field, f"{path}.key_value.key", _lookup(sub, "key"))
            walk(t.item_field, f"{path}.key_value.value", _lookup(sub, "value"))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_field, f"{path}.list.{t.value_field.name}", _lookup(sub, "element"))
        elif m is not None and m.field_id is not None:
            out[path] = m.field_id

    for f in schema:
        walk(f, f.name, _lookup(mapping, f.name))
    return out


def _top_level_ids(schema: pa.Schema, mapping: tuple[MappedField, ...]) -> tuple[dict[str, int], bool]:
    """The file's top-level column name -> field id, and whether the file carries ids (as
    the reader decides: any top-level id)."""
    own = {f.name: int(f.metadata[_FIELD_ID]) for f in schema if f.metadata and _FIELD_ID in f.metadata}
    if own:
        return own, True
    mapped = {
        f.name: m.field_id for f in schema if (m := _lookup(mapping, f.name)) and m.field_id is not None
    }
    return mapped, False


def _check_columns(
    location: str, ids: Mapping[str, int], has_ids: bool, metadata: TableMetadata, table: str
) -> None:
    schema = metadata.schema()
    if has_ids:
        for name, fid in ids.items():
            if schema.find_field_or_none(fid) is None or schema.parent_id(fid) is not None:
                raise ValidationError(
                    f"add_files: {location} has column {name!r} with field id {fid}, which is not a "
                    f"column of table {table}: a file with field ids must use the table's ids"
                )
    if not ids:
        raise ValidationError(f"add_files: no column of {location} matches a column of table {table}")
    present = set(ids.values())
    spec = metadata.spec()
    supplied = {f.source_id for f in spec.fields if f.transform.is_identity}
    for f in schema.fields:
        if f.required and f.field_id not in present and f.field_id not in supplied:
            raise ValidationError(f"add_files: {location} has no column for the required column {f.name!r}")


def imported_file(
    location: str,
    partition: tuple[Any, ...],
    metadata: TableMetadata,
    mapping: tuple[MappedField, ...],
    table: str,
) -> DataFile:
    """The data file entry of one Parquet file, metrics from its footer."""
    with storage_errors(location):
        try:
            if is_object_store(location):  # the footer's byte ranges, through pyarrow's S3 client
                with open_input(location) as stream:
                    footer = pq.read_metadata(stream)
            else:
                footer = pq.read_metadata(location)
        except (pa.ArrowInvalid, OSError) as e:
            if isinstance(e, FileNotFoundError | PermissionError):
                raise
            raise CorruptDataError(f"add_files: not a readable Parquet file: {e}", location) from None
    arrow_schema = footer.schema.to_arrow_schema()
    ids, has_ids = _top_level_ids(arrow_schema, mapping)
    _check_columns(location, ids, has_ids, metadata, table)
    column_ids = leaf_field_ids(arrow_schema) if has_ids else mapped_column_ids(arrow_schema, mapping)
    metrics = file_metrics(footer, metadata.schema(), metadata.properties, column_ids=column_ids)
    size, spec_id = file_size(location), metadata.spec().spec_id
    rows = footer.num_rows
    return parquet_data_file(location, partition, rows, size, metrics, sort_order_id=0, spec_id=spec_id)


def _located(
    metadata: TableMetadata, path: str, partition_filter: Mapping[str, str], table: str
) -> list[tuple[str, tuple[Any, ...]]]:
    """(file, partition) of every file to import."""
    spec = metadata.spec()
    if spec.is_unpartitioned:
        nulls = tuple(None for _ in spec.fields)  # void fields, if any, hold null
        return [(f, nulls) for f in source.unpartitioned_files(path)]
    parts = [p for p in source.partitioned_files(path, spec, table) if source.matches(p, partition_filter)]
    if not parts:
        raise UserError(f"add_files: Cannot find any matching partitions in table {table}")
    schema = metadata.schema()
    return [(f, source.partition_tuple(spec, schema, p.values)) for p in parts for f in p.files]


def _referenced(ctx: OpContext, metadata: TableMetadata) -> set[str]:
    """The local paths of every file the current snapshot references."""
    head = metadata.current_snapshot()
    if head is None:
        return set()
    specs = metadata.specs_by_id()
    found: set[str] = set()
    for m in ctx.manifests.snapshot_manifests(head, metadata.format_version):
        parsed = ctx.manifests.parsed_manifest(m, specs)
        found.update(key(e.data_file.file_path) for e in parsed.live)
    return found


def _check_duplicates(ctx: OpContext, metadata: TableMetadata, files: list[DataFile]) -> None:
    referenced = _referenced(ctx, metadata)
    duplicates = [f.file_path for f in files if key(f.file_path) in referenced]
    if duplicates:
        raise ValidationError(
            "Cannot complete import because data files to be imported already exist within the target "
            f"table: {','.join(duplicates[:_DUPLICATES_SHOWN])}.  This is disabled by default as Iceberg "
            "is not designed for multiple references to the same file within the same table.  If you "
            "are sure, you may set 'check_duplicate_files' to false to force the import."
        )


def _count(summary: Mapping[str, str], key: str) -> int | None:
    value = summary.get(key)
    return int(value) if value is not None else None


def add_files(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    name = str(table.identifier)
    metadata = table.metadata
    path = source.source_path(args.required("source_table"))
    partition_filter: dict[str, str] = dict(args.get("partition_filter", {}))
    check_duplicates = bool(args.get("check_duplicate_files", True))
    parallelism = int(args.get("parallelism", 1))
    if parallelism < 1:
        raise UserError("add_files: Parallelism should be larger than 0")
    source.check_identity_spec(metadata.spec(), name)
    source.check_partition_filter(metadata.spec(), partition_filter, name)
    located = _located(metadata, path, partition_filter, name)
    if len({f for f, _ in located}) != len(located):
        raise UserError("add_files: the source names a file twice")
    mapping_text, set_mapping = _mapping(metadata)
    mapping = parse_name_mapping(mapping_text)

    def one(item: tuple[str, tuple[Any, ...]]) -> DataFile:
        return imported_file(item[0], item[1], metadata, mapping, name)

    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        files = list(pool.map(one, located))
    changes = SnapshotChanges(operation=Operation.APPEND, added_data_files=tuple(files))

    def attempt(base: LoadedTable) -> PendingCommit:
        current = base.metadata
        if (
            current.spec().spec_id != metadata.spec().spec_id
            or current.current_schema_id != metadata.current_schema_id
        ):
            raise ValidationError(
                f"add_files: table {name} changed its schema or partitioning meanwhile; run it again"
            )
        if check_duplicates:
            _check_duplicates(ctx, current, files)
        if set_mapping and props.SCHEMA_NAME_MAPPING not in current.properties:
            builder = MetadataBuilder(current)
            builder.set_properties({props.SCHEMA_NAME_MAPPING: mapping_text})
            current = builder.build()
        return produce(current, changes, table_location=current.location, cache=ctx.manifests)

    committed = commit(ctx.catalog, table.identifier, attempt, base=table)
    snapshot = committed.metadata.current_snapshot()
    summary = snapshot.summary if snapshot is not None else {}
    return [(_count(summary, "added-data-files") or 0, _count(summary, "changed-partition-count"))]


PROCEDURE = Procedure(
    name="add_files",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("source_table", Kind.STRING, required=True),
        Parameter("partition_filter", Kind.STRING_MAP),
        Parameter("check_duplicate_files", Kind.BOOLEAN),
        Parameter("parallelism", Kind.INT),
    ),
    output=pa.schema(
        [
            pa.field("added_files_count", pa.int64(), nullable=False),
            pa.field("changed_partition_count", pa.int64()),
        ]
    ),
    run=add_files,
    summary="import existing Parquet files into a table without rewriting them",
)

"""``CALL system.compute_table_stats(table, snapshot_id, columns)``: the number of distinct
values of columns, as theta sketches in a Puffin statistics file registered in the table
metadata's ``statistics``.

Spark's procedure (Iceberg 1.10's ``ComputeTableStatsSparkAction``), with its messages:

* ``snapshot_id`` defaults to the current snapshot ("Snapshot not found: n" for an unknown
  one); a table without snapshots yields no row and changes nothing.
* ``columns`` defaults to every top-level primitive column of the snapshot's schema;
  a given list is deduplicated and must name primitive fields of that schema ("Can't find
  column c in ..."; "Can't compute stats on non-primitive type column: c (...)").
* The snapshot is read as a query reads it (deletes applied), with the snapshot's schema.
* The file goes to the metadata folder as ``<snapshot id>-<uuid>.stats`` and is
  registered through the commit loop, replacing the file that snapshot had (the old file
  stays on disk until ``remove_orphan_files`` finds it, as in Java). The result is one row,
  ``statistics_file``: the new file's location.

A crash before the commit leaves the table as it was (the written file is removed, or is
an orphan); after it, the table has the new entry. Nothing is ever deleted that a
snapshot or statistics entry still references.
"""

from __future__ import annotations

import uuid

import pyarrow as pa

from iceduck.catalog.base import LoadedTable
from iceduck.engine.queries import arrow_rows
from iceduck.engine.read import register_scan
from iceduck.engine.types import quote_identifier
from iceduck.errors import NotFoundError, ValidationError
from iceduck.formats.statistics_file import ColumnSketch, write_theta_statistics
from iceduck.formats.theta_sketch import ThetaSketch, serialize_checked, sketchable, value_bytes
from iceduck.io import fileio
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.rows import relation_name
from iceduck.scan.planner import plan_scan
from iceduck.spec.properties import metadata_location
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import Snapshot, StatisticsFile
from iceduck.spec.types import DoubleType, FloatType, NestedField, PrimitiveType, StructType
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit
from iceduck.version import __version__

#: the Puffin file's ``created-by`` ("human-readable identification of the application")
CREATED_BY = f"iceduck {__version__}"


def compute_table_stats(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    metadata = table.metadata
    snapshot = _snapshot(table, args.get("snapshot_id"))
    if snapshot is None:
        return []
    schema = _snapshot_schema(table, snapshot)
    columns = _columns(schema, args.get("columns"))
    sketches = _sketches(ctx, table, snapshot, schema, columns)
    data, footer_size, blobs = write_theta_statistics(
        sketches,
        snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot.sequence_number,
        created_by=CREATED_BY,
    )
    folder = metadata_location(metadata.properties, metadata.location)
    location = f"{folder}/{snapshot.snapshot_id}-{uuid.uuid4()}.stats"
    fileio.write_new(location, data)
    entry = StatisticsFile(
        snapshot_id=snapshot.snapshot_id,
        statistics_path=location,
        file_size_in_bytes=len(data),
        file_footer_size_in_bytes=footer_size,
        blob_metadata=blobs,
    )

    def attempt(base: LoadedTable) -> PendingCommit:
        if base.metadata.find_snapshot(snapshot.snapshot_id) is None:
            raise ValidationError(f"Snapshot not found: {snapshot.snapshot_id} (expired meanwhile)")
        builder = MetadataBuilder(base.metadata)
        builder.set_statistics(entry)
        return PendingCommit(builder.build(), [])

    commit(ctx.catalog, table.identifier, attempt, base=table, cleanup_on_failure=[location])
    return [(location,)]


def _snapshot(table: LoadedTable, snapshot_id: int | None) -> Snapshot | None:
    metadata = table.metadata
    if snapshot_id is None:
        return metadata.current_snapshot()
    snapshot = metadata.find_snapshot(snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"Snapshot not found: {snapshot_id}")
    return snapshot


def _snapshot_schema(table: LoadedTable, snapshot: Snapshot) -> Schema:
    """The schema the snapshot was written with (Java: ``table.schemas().get(snapshot.schemaId())``)."""
    if snapshot.schema_id is None:
        return table.metadata.schema()
    return table.metadata.schema_by_id(snapshot.schema_id)


def _columns(schema: Schema, requested: list[str] | None) -> list[NestedField]:
    """The fields to sketch: the requested ones (deduplicated, in order) or every top-level
    column of a type a sketch takes."""
    if requested is None:
        found = [
            f for f in schema.fields if isinstance(f.field_type, PrimitiveType) and sketchable(f.field_type)
        ]
        if not found:
            raise ValidationError("No columns found to compute stats")
        return found
    if not requested:
        raise ValidationError("Columns cannot be null/empty")
    fields: list[NestedField] = []
    for name in dict.fromkeys(requested):
        field = schema.find_field_or_none(name)
        if field is None:
            raise NotFoundError(f"Can't find column {name} in {schema}")
        if not isinstance(field.field_type, PrimitiveType):
            raise ValidationError(
                f"Can't compute stats on non-primitive type column: {name} ({field.field_type})"
            )
        if not sketchable(field.field_type):
            raise ValidationError(
                f"Can't compute stats on column {name}: {field.field_type} values have no sketch"
            )
        fields.append(field)
    return fields


def _sketches(
    ctx: OpContext, table: LoadedTable, snapshot: Snapshot, schema: Schema, fields: list[NestedField]
) -> list[ColumnSketch]:
    """One sketch per field of the snapshot's rows (the planned scan: deletes applied)."""
    paths = {f.field_id: _path(schema, f.field_id) for f in fields}
    top_ids = list(dict.fromkeys(path[0].field_id for path in paths.values()))
    plan = plan_scan(table.metadata, snapshot=snapshot, schema=schema, cache=ctx.manifests)
    view = ctx.unique_name("table_stats")
    register_scan(ctx.duck, plan, view, top_ids, layouts=ctx.layouts, positions=ctx.positions)
    result: list[ColumnSketch] = []
    for done, field in enumerate(fields):
        column = ".".join(quote_identifier(p.name) for p in paths[field.field_id])
        field_type = field.field_type
        assert isinstance(field_type, PrimitiveType)
        # DuckDB's DISTINCT equates 0.0 and -0.0 (and NaNs); Java hashes their bytes apart
        distinct = "" if isinstance(field_type, FloatType | DoubleType) else "DISTINCT "
        sql = f"SELECT {distinct}{column} AS v FROM {relation_name(view)} WHERE {column} IS NOT NULL"
        values: pa.Table = arrow_rows(ctx.duck, sql)
        sketch = ThetaSketch()
        sketch.update_all(value_bytes(field_type, values.column(0)))
        data, estimate = serialize_checked(sketch)
        result.append(ColumnSketch(field.field_id, data, estimate))
        ctx.report_progress(100.0 * (done + 1) / len(fields))
    return result


def _path(schema: Schema, field_id: int) -> list[NestedField]:
    """The fields from the top-level column down to ``field_id``, through structs only."""

    def walk(
        fields: tuple[NestedField, ...] | list[NestedField], trail: list[NestedField]
    ) -> list[NestedField] | None:
        for f in fields:
            if f.field_id == field_id:
                return [*trail, f]
            if isinstance(f.field_type, StructType):
                found = walk(f.field_type.fields, [*trail, f])
                if found is not None:
                    return found
        return None

    path = walk(schema.fields, [])
    if path is None:
        name = schema.column_name(field_id)
        raise ValidationError(f"Can't compute stats on column {name}: it is inside a list or map")
    return path


PROCEDURE = Procedure(
    name="compute_table_stats",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("snapshot_id", Kind.LONG),
        Parameter("columns", Kind.STRING_ARRAY),
    ),
    output=pa.schema([pa.field("statistics_file", pa.string())]),
    run=compute_table_stats,
    summary="compute the number of distinct values of columns into a statistics file",
)

"""Upserts: an INSERT that replaces the rows with the same key, without reading the table.

A change data feed (Debezium, a Kafka topic, an API export) arrives as rows with a key.
Flink's Iceberg sink writes such rows in *upsert mode*: for each row an equality delete on
the key plus the row itself, in one snapshot; nothing of the table is read. iceduck writes
upserts the same way:

* on a table with identifier fields and ``write.upsert.enabled=true`` (Flink's property),
  every ``INSERT INTO t ...``;
* on any table with identifier fields, ``INSERT OR REPLACE INTO t ...`` (DuckDB's spelling
  of "replace the row with the same key").

The key is the schema's identifier fields (spec, "Identifier Field IDs": "Identifier
field ids are used to [...] [find] rows that should be replaced with an upsert"; they are
required, primitive, not float or double -- checked when they are set).

What is written, in one snapshot (``overwrite``, as Java's ``RowDelta`` with data and
deletes):

* the new rows as data files;
* the keys of the new rows as equality delete files ("Equality Delete Files": a row is
  deleted when its values "are equal" to a delete row's in every equality field), with
  ``equality_ids`` = the identifier fields, one file (or more, rolled) per partition.

Both get the new snapshot's sequence number, and "an equality delete file must be applied
to a data file when [...] the data file's data sequence number is *strictly less than* the
delete's": the deletes remove every older row with those keys and none of the new rows.

Partitions. An equality delete "must be applied to a data file when [...] the data file's
partition (both spec id and partition values) is equal to the delete file's partition or
the delete file's partition spec is unpartitioned". So a key's delete reaches the old row
only if it is written in the old row's partition: each partition field's source column must
be an identifier field (Flink requires the same: "partition fields should be included in
equality fields"), and a delete file is written for each partition spec that live data
files were written with (after partition evolution, old files keep their spec), computed
from the manifest list alone.

Duplicate keys within one statement: the last row (in the query's order) wins, as if
each row were upserted in turn; the others are not written.

Concurrency: nothing is read, so an upsert conflicts with no concurrent append, delete or
upsert (retries re-sequence it after them: the last upsert of a key wins); a compaction
that rewrote files meanwhile keeps their old sequence numbers, so the deletes still apply
(:mod:`iceduck.txn.snapshot`), and a compaction committing after the upsert fails its own
validation of new deletes, as in Java.
"""

from __future__ import annotations

from iceduck.engine.delete_write import write_equality_deletes
from iceduck.engine.queries import temp_table
from iceduck.engine.types import quote_identifier, try_cast_sql
from iceduck.engine.write import FileTarget, column_ref, write_data_files
from iceduck.errors import UserError, ValidationError
from iceduck.ops.context import OpContext, OpResult, WriteTarget
from iceduck.ops.context import rows as row_count
from iceduck.ops.rows import branch_snapshot, params_for, run_sql
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, data_location, file_target
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile, ManifestContent
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema, select_fields
from iceduck.spec.snapshot import Operation
from iceduck.spec.sort import UNSORTED
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import NestedField, StructType
from iceduck.txn.snapshot import SnapshotChanges


def upsert_enabled(metadata: TableMetadata) -> bool:
    """Whether a plain INSERT into the table is an upsert (``write.upsert.enabled``)."""
    return props.bool_property(metadata.properties, props.UPSERT_ENABLED, False)


def upsert_key(target: WriteTarget, how: str) -> tuple[int, ...]:
    """The identifier field ids an upsert into ``target`` replaces rows by; a clear error
    when the table cannot take upserts (``how`` names what asked for one)."""
    metadata = target.table.metadata
    name = target.identifier
    key = metadata.schema().identifier_field_ids
    if not key:
        raise UserError(
            f"{how}: table {name} has no identifier fields to replace rows by "
            f"(ALTER TABLE {name} SET IDENTIFIER FIELDS <columns> first)"
        )
    if metadata.format_version < 2:
        raise ValidationError(
            f"{how}: table {name} is format-version 1, which has no equality deletes "
            "(row-level deletes are added by v2): upgrade the table"
        )
    return key


def delete_specs(ctx: OpContext, target: WriteTarget, key: tuple[int, ...], how: str) -> list[PartitionSpec]:
    """The partition specs equality deletes are written with: the current spec and every
    spec live data files were written with (from the manifest list: no manifest is read).
    Each must partition by key columns only, or the delete of a key could miss its row."""
    specs, problem = _delete_specs(ctx, target, key)
    if problem is not None:
        raise ValidationError(f"{how}: {problem}")
    return specs


def key_deletes_possible(ctx: OpContext, target: WriteTarget, key: tuple[int, ...]) -> bool:
    """Whether deletes by ``key`` can be equality deletes (every spec in use partitions by
    key columns only)."""
    return _delete_specs(ctx, target, key)[1] is None


def _delete_specs(
    ctx: OpContext, target: WriteTarget, key: tuple[int, ...]
) -> tuple[list[PartitionSpec], str | None]:
    metadata = target.table.metadata
    wanted = {metadata.default_spec_id}
    snapshot = branch_snapshot(target)
    if snapshot is not None:
        for m in ctx.manifests.snapshot_manifests(snapshot, metadata.format_version):
            if m.content is ManifestContent.DATA and (m.has_added_files() or m.has_existing_files()):
                wanted.add(m.partition_spec_id)
    specs = metadata.specs_by_id()
    out = []
    for spec_id in sorted(wanted):
        spec = specs[spec_id]
        for pf in spec.fields:
            if not pf.transform.is_void and pf.source_id not in key:
                source = metadata.schema().column_name(pf.source_id) or f"field {pf.source_id}"
                return [], (
                    f"table {target.identifier} is partitioned by {pf.name} (of column "
                    f"{source}, spec {spec_id}), which is not an identifier field: the equality "
                    "delete of a key applies only in its own partition, so a row whose key moved "
                    "partition would be kept twice; make the partition source columns identifier "
                    "fields (as Flink's upsert requires)"
                )
        out.append(spec)
    return out, None


def _key_value(f: NestedField, ref: str) -> str:
    """SQL of one top-level column of the key schema: structs rebuilt with only the
    identifier fields they hold."""
    if isinstance(f.field_type, StructType):
        inner = ", ".join(
            f"{quote_identifier(c.name)} := {_key_value(c, f'{ref}.{quote_identifier(c.name)}')}"
            for c in f.field_type.fields
        )
        return f"struct_pack({inner})"
    return ref


def key_rows_sql(key_schema: Schema, relation: str) -> str:
    """The key columns of ``relation`` (rows with the table's columns), as the equality
    delete files hold them."""
    items = [
        f"{_key_value(f, quote_identifier(f.name))} AS {quote_identifier(f.name)}" for f in key_schema.fields
    ]
    return f"SELECT {', '.join(items)} FROM {relation}"


#: the position of a row in the statement's rows
_ORDINAL = "__iceduck_ordinal"


def _last_per_key(schema: Schema, key: tuple[int, ...], order: str) -> str:
    """``QUALIFY`` keeping of each key its row last by ``order``; keys compared as the
    column type holds them."""
    keys = ", ".join(try_cast_sql(column_ref(schema, k), schema.find_type(k)) for k in key)
    return f"QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY {order} DESC) = 1"


def last_per_key_sql(schema: Schema, key: tuple[int, ...], table: str) -> str:
    """The rows of ``table`` (a temporary table holding the statement's rows in order),
    keeping of each key its last row: DuckDB numbers a table's rows in insertion order
    (``rowid``). Keys are compared as the column type holds them (``'01'`` and ``1`` are
    one int key); a value that does not convert is refused by the file writer, naming
    the column."""
    return f"SELECT * FROM {table} {_last_per_key(schema, key, 'rowid')}"


def write_key_deletes(
    ctx: OpContext, target: WriteTarget, specs: list[PartitionSpec], key: tuple[int, ...], relation: str
) -> list[DataFile]:
    """Equality delete files of the keys of ``relation`` (rows with the table's key columns
    by name), for each of ``specs``."""
    metadata = target.table.metadata
    key_schema = select_fields(metadata.schema(), key)
    location = data_location(metadata)
    out: list[DataFile] = []
    for spec in specs:
        delete_target = FileTarget(
            key_schema, spec, UNSORTED, metadata.properties, location, metadata.format_version
        )
        out += write_equality_deletes(ctx.duck, key_rows_sql(key_schema, relation), delete_target, key)
    return out


def upsert(ctx: OpContext, target: WriteTarget, select: str, how: str) -> OpResult:
    """Write ``select``'s rows (the table's columns in order) as an upsert: see the module
    docstring. ``rowcount`` is the rows written (one per key)."""
    metadata = target.table.metadata
    schema = metadata.schema()
    key = upsert_key(target, how)
    specs = delete_specs(ctx, target, key, how)
    numbered = f"SELECT *, row_number() OVER () AS {_ORDINAL} FROM ({select})"  # in the query's order
    rows = f"SELECT * EXCLUDE ({_ORDINAL}) FROM ({numbered}) {_last_per_key(schema, key, _ORDINAL)}"
    with temp_table(ctx.duck, ctx.unique_name("upsert"), rows, params_for(select, ctx.params)) as table:
        count = int(run_sql(ctx, f"SELECT count(*) FROM {table}")[0][0])
        if not count:
            return OpResult(rowcount=0, message=f"upserted 0 rows into {target.identifier}")
        with WrittenFiles() as written:
            data = written.add(
                write_data_files(
                    ctx.duck, f"SELECT * FROM {table}", file_target(metadata), width=len(schema.fields)
                )
            )
            deletes = written.add(write_key_deletes(ctx, target, specs, key, table))
            snapshot = branch_snapshot(target)
            changes = SnapshotChanges(
                operation=Operation.OVERWRITE,
                added_data_files=tuple(data),
                added_delete_files=tuple(deletes),
                validate_from_snapshot_id=None if snapshot is None else snapshot.snapshot_id,
            )
            commit_changes(ctx, target, changes, written)
    return OpResult(rowcount=count, message=f"upserted {row_count(count)} into {target.identifier}")


def upsert_description(target: WriteTarget, how: str) -> str:
    """One line for EXPLAIN: the key and what an upsert writes."""
    schema = target.table.metadata.schema()
    key = upsert_key(target, how)
    names = ", ".join(schema.column_name(k) or str(k) for k in key)
    return (
        f"upsert by identifier fields ({names}): equality deletes of the new rows' keys, one file "
        "per partition, plus the new rows, in one snapshot; the table is not read"
    )

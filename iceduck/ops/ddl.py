"""Namespaces and tables: CREATE/DROP NAMESPACE, CREATE TABLE (plain, AS SELECT, OR
REPLACE, REPLACE), DROP TABLE [PURGE], ALTER TABLE ... RENAME TO.

Behaviour follows Spark 3.5 with Iceberg 1.10 on the shared JDBC catalog (checked in
tests/interop/test_ops_ddl_spark.py):

* CREATE TABLE stores COMMENT as the ``comment`` property and consumes ``format-version``
  (Java's ``TableMetadata.newTableMetadata``); ``write.parquet.compression-codec=zstd`` is
  stored on every new table, as Java has done since 1.4. Property values iceduck honours
  are checked before any file is written (:func:`iceduck.spec.properties.validate_properties`).
* CREATE TABLE ... AS SELECT is one atomic operation, as Spark's staged CTAS: the table is
  created with its first snapshot (an ``append``, even when the query yields no rows) in a
  single metadata file, so no reader ever sees the table empty.
* CREATE OR REPLACE / REPLACE TABLE keep the table's history (Java's
  ``buildReplacement``): old snapshots stay reachable, ``main`` points at the new data (an
  ``overwrite`` snapshot without parent) or at nothing.
* DROP NAMESPACE refuses a namespace that holds tables; with CASCADE its tables (and
  nested namespaces) are dropped first, without purging their files. (Spark's Iceberg
  catalog refuses CASCADE too -- "Namespace p is not empty" -- iceduck does what the SQL
  says instead.)
* CREATE TABLE in a namespace that does not exist is refused (Spark's JDBC catalog creates
  the table anyway, leaving a namespace with no row; PyIceberg and DuckDB refuse).
* RENAME TO a bare name keeps the table in its namespace, as Spark does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from iceduck.catalog.base import LoadedTable, Namespace, TableIdentifier
from iceduck.catalog.locations import check_location, check_path_properties
from iceduck.catalog.names import check_namespace, check_new_table, namespace_display
from iceduck.engine.result_types import query_columns
from iceduck.engine.write import write_data_files
from iceduck.errors import AlreadyExistsError, CommitConflictError, NotFoundError, UserError, ValidationError
from iceduck.ops.alter_requests import partition_terms, sort_terms
from iceduck.ops.context import OpContext, OpResult
from iceduck.ops.context import rows as row_count
from iceduck.ops.rows import params_for
from iceduck.ops.snapshot_commit import WrittenFiles, file_target
from iceduck.ops.table_schema import (
    column_field,
    fresh_schema,
    table_properties,
)
from iceduck.spec import properties as tp
from iceduck.spec.manifest import DataFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import MAIN_BRANCH, Operation
from iceduck.spec.sort import UNSORTED, SortOrder
from iceduck.spec.table_metadata import TableMetadata
from iceduck.sql.statements import CreateNamespace, CreateTable, DropNamespace, DropTable, Name, RenameTable
from iceduck.txn.builder import new_table_metadata, parse_format_version, replace_table_metadata
from iceduck.txn.commit import PendingCommit, commit, create
from iceduck.txn.snapshot import SnapshotChanges, produce
from iceduck.txn.sort_update import sort_order_from_terms
from iceduck.txn.spec_update import spec_from_terms

#: the order id of a new table's first sort order (0 is reserved for "unsorted")
FIRST_SORT_ORDER_ID = 1

# -- namespaces -----------------------------------------------------------------------------


def namespace_of(ctx: OpContext, parts: Name) -> Namespace:
    """The namespace a written name means: a leading catalog name is dropped
    (``iceduck.db`` is namespace ``db`` of catalog ``iceduck``, as in Spark)."""
    if len(parts) >= 2 and parts[0].lower() == ctx.catalog.name.lower():
        parts = parts[1:]
    return tuple(parts)


def create_namespace(ctx: OpContext, stmt: CreateNamespace) -> OpResult:
    namespace = namespace_of(ctx, stmt.namespace)
    check_namespace(namespace)
    shown = namespace_display(namespace)
    if ctx.catalog.namespace_exists(namespace):
        if stmt.if_not_exists:
            return OpResult(message=f"namespace {shown} already exists")
        raise AlreadyExistsError(f"namespace {shown} already exists in catalog {ctx.catalog.name!r}")
    try:
        ctx.catalog.create_namespace(namespace, dict(stmt.properties) or None)
    except AlreadyExistsError:
        if not stmt.if_not_exists:
            raise
    return OpResult(message=f"created namespace {shown}")


def drop_namespace(ctx: OpContext, stmt: DropNamespace) -> OpResult:
    namespace = namespace_of(ctx, stmt.namespace)
    shown = namespace_display(namespace)
    if not namespace or not ctx.catalog.namespace_exists(namespace):
        if stmt.if_exists:
            return OpResult(message=f"no namespace {shown} to drop")  # not an error: IF EXISTS
        raise NotFoundError(f"namespace {shown} not found in catalog {ctx.catalog.name!r}")
    if stmt.cascade:
        dropped = _drop_contents(ctx, namespace)
        ctx.catalog.drop_namespace(namespace)
        return OpResult(message=f"dropped namespace {shown} and {dropped} table(s)")
    tables = ctx.catalog.list_tables(namespace)
    children = ctx.catalog.list_namespaces(namespace)
    if tables or children:
        held = [t.name for t in tables] + [namespace_display(c) for c in children]
        raise ValidationError(
            f"namespace {shown} is not empty (it holds {', '.join(held)}): drop those first, "
            f"or use DROP NAMESPACE {shown} CASCADE"
        )
    ctx.catalog.drop_namespace(namespace)
    return OpResult(message=f"dropped namespace {shown}")


def _drop_contents(ctx: OpContext, namespace: Namespace) -> int:
    """Drop every table under ``namespace`` (depth first); how many were dropped."""
    dropped = 0
    for child in ctx.catalog.list_namespaces(namespace):
        if child != namespace:
            dropped += _drop_contents(ctx, child)
            ctx.catalog.drop_namespace(child)
    for table in ctx.catalog.list_tables(namespace):
        ctx.catalog.drop_table(table, purge=False)
        dropped += 1
    return dropped


# -- CREATE TABLE -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Definition:
    """What a CREATE [OR REPLACE] TABLE statement defines, with schema ids resolved."""

    schema: Schema
    spec: PartitionSpec
    sort_order: SortOrder
    properties: dict[str, str]
    #: the requested ``format-version`` (None: not given)
    format_version: int | None
    #: the CTAS query, runnable on ``ctx.duck`` (Iceberg tables attached), or None
    query_sql: str | None


def create_table(ctx: OpContext, stmt: CreateTable) -> OpResult:
    identifier = ctx.new_identifier(stmt.name)
    exists = ctx.catalog.table_exists(identifier)
    if stmt.replace or stmt.or_replace:
        if exists:
            return _replace_table(ctx, stmt)
        if stmt.replace:
            raise NotFoundError(
                f"cannot replace table {identifier}: it does not exist (CREATE OR REPLACE TABLE creates it)"
            )
    elif exists:
        if stmt.if_not_exists:
            return OpResult(message=f"table {identifier} already exists")
        raise AlreadyExistsError(f"table {identifier} already exists in catalog {ctx.catalog.name!r}")
    if not ctx.catalog.namespace_exists(identifier.namespace):
        shown = namespace_display(identifier.namespace)
        raise NotFoundError(
            f"cannot create table {identifier}: namespace {shown} does not exist "
            f"(CREATE NAMESPACE {shown} first)"
        )
    return _create_table(ctx, stmt, identifier)


def _definition(
    ctx: OpContext, stmt: CreateTable, base_version: int = tp.DEFAULT_FORMAT_VERSION
) -> _Definition:
    """Resolve the statement's columns (or query), partitioning, order and properties;
    ``base_version`` is the format version the table gets unless the statement sets one
    (a query's types are coerced for it: ``timestamp_ns`` needs version 3)."""
    version = stmt.properties.get(tp.FORMAT_VERSION)
    requested = parse_format_version(version) if version is not None else None
    query_sql = None
    if stmt.as_query is not None:
        if stmt.columns:
            raise UserError(
                "CREATE TABLE ... AS SELECT takes its columns from the query: drop the column list"
            )
        query_sql = ctx.prepare_query(stmt.as_query)
        params = params_for(query_sql, ctx.params)
        fields = query_columns(ctx.duck, query_sql, params, requested or base_version)
    else:
        if not stmt.columns:
            raise UserError(f"CREATE TABLE {'.'.join(stmt.name)} needs at least one column")
        fields = [column_field(c, i) for i, c in enumerate(stmt.columns, 1)]
    schema = fresh_schema(fields)  # types and defaults vs the format version: the builder checks
    spec = spec_from_terms(schema, partition_terms(stmt.partition_by))
    order = (
        sort_order_from_terms(schema, sort_terms(stmt.sort_by), FIRST_SORT_ORDER_ID)
        if stmt.sort_by
        else UNSORTED
    )
    properties = table_properties(stmt.properties, stmt.comment)
    tp.validate_properties(properties, schema)  # before any file is written
    return _Definition(schema, spec, order, properties, requested, query_sql)


def _check_locations(stmt: CreateTable) -> None:
    """Refuse an explicit LOCATION or write path no writer can use (before any file is
    written; :mod:`iceduck.catalog.locations`)."""
    if stmt.location is not None:
        check_location(stmt.location)
    check_path_properties(stmt.properties)


def _location(ctx: OpContext, stmt: CreateTable, identifier: TableIdentifier) -> str:
    _check_locations(stmt)
    if stmt.location is None:
        location = ctx.catalog.default_table_location(identifier)
        check_location(location, "warehouse location")  # the warehouse path itself (a backslash...)
        return location
    location = stmt.location.rstrip("/")
    if "://" not in location and not location.startswith("file:"):
        location = str(Path(location).absolute())  # readers elsewhere must find it too
    return location


def _create_table(ctx: OpContext, stmt: CreateTable, identifier: TableIdentifier) -> OpResult:
    check_new_table(identifier)  # its name becomes its folder (iceduck.catalog.names)
    definition = _definition(ctx, stmt)
    metadata = new_table_metadata(
        definition.schema,
        definition.spec,
        definition.sort_order,
        _location(ctx, stmt, identifier),
        definition.properties,
        format_version=definition.format_version or tp.DEFAULT_FORMAT_VERSION,
    )
    if definition.query_sql is None:
        ctx.catalog.create_table(identifier, metadata)
        return OpResult(message=f"created table {identifier}")
    _stage(ctx, identifier, metadata)
    with WrittenFiles() as written:
        files = written.add(
            write_data_files(
                ctx.duck,
                definition.query_sql,
                file_target(metadata),
                params=params_for(definition.query_sql, ctx.params),
            )
        )
        pending = _with_rows(ctx, metadata, files, Operation.APPEND)
        written.paths.extend(pending.written)
        create(ctx.catalog, identifier, pending.metadata, cleanup_on_failure=written.take())
    rows = sum(f.record_count for f in files)
    return OpResult(rowcount=rows, message=f"created table {identifier} with {row_count(rows)}")


def _stage(ctx: OpContext, identifier: TableIdentifier, metadata: TableMetadata) -> None:
    """Let a catalog that vends each table its storage properties (REST's ``stage-create``)
    vend the new table's before its data files are written: they are written before the
    catalog knows the table. A catalog without ``stage_create`` needs nothing."""
    stage = getattr(ctx.catalog, "stage_create", None)
    if stage is not None:
        stage(identifier, metadata)


def _with_rows(
    ctx: OpContext, metadata: TableMetadata, files: Sequence[DataFile], operation: Operation
) -> PendingCommit:
    """``metadata`` plus one snapshot on ``main`` adding ``files`` (Spark commits this
    snapshot even when there are none)."""
    changes = SnapshotChanges(operation, added_data_files=tuple(files))
    return produce(
        metadata, changes, branch=MAIN_BRANCH, table_location=metadata.location, cache=ctx.manifests
    )


def _replace_table(ctx: OpContext, stmt: CreateTable) -> OpResult:
    """CREATE OR REPLACE / REPLACE TABLE on an existing table: Java's ``buildReplacement``
    (history kept, field ids of same-named columns reused), plus an ``overwrite``
    snapshot holding the query's rows for REPLACE ... AS SELECT."""
    target = ctx.resolve_target(stmt.name)
    if target.branch != MAIN_BRANCH:
        raise UserError(f"cannot replace {'.'.join(stmt.name)}: a branch is not a table")
    loaded = target.table
    identifier = target.identifier
    definition = _definition(ctx, stmt, loaded.metadata.format_version)
    _check_locations(stmt)
    location = _location(ctx, stmt, identifier) if stmt.location is not None else None

    def replacement(base: TableMetadata) -> TableMetadata:
        new = replace_table_metadata(
            base,
            definition.schema,
            definition.spec,
            definition.sort_order,
            definition.properties,
            format_version=definition.format_version,
        )
        return dataclasses.replace(new, location=location) if location is not None else new

    first = replacement(loaded.metadata)
    if definition.query_sql is None:
        commit(
            ctx.catalog, identifier, lambda base: PendingCommit(replacement(base.metadata), []), base=loaded
        )
        return OpResult(message=f"replaced table {identifier}")

    with WrittenFiles() as written:
        files = written.add(
            write_data_files(
                ctx.duck,
                definition.query_sql,
                file_target(first),
                params=params_for(definition.query_sql, ctx.params),
            )
        )

        def attempt(base: LoadedTable) -> PendingCommit:
            new = replacement(base.metadata)
            if new.schema().fields != first.schema().fields or new.spec() != first.spec():
                raise CommitConflictError(
                    f"table {identifier} changed while its replacement rows were written "
                    "(its schema or partitioning moved); run the statement again"
                )
            return _with_rows(ctx, new, files, Operation.OVERWRITE)

        commit(ctx.catalog, identifier, attempt, base=loaded, cleanup_on_failure=written.take())
    rows = sum(f.record_count for f in files)
    return OpResult(rowcount=rows, message=f"replaced table {identifier} with {row_count(rows)}")


# -- DROP, RENAME -----------------------------------------------------------------------------


def drop_table(ctx: OpContext, stmt: DropTable) -> OpResult:
    try:
        target = ctx.resolve_target(stmt.name)
    except NotFoundError:
        if stmt.if_exists:
            return OpResult(message=f"no table {'.'.join(stmt.name)} to drop")  # not an error: IF EXISTS
        raise
    if target.branch != MAIN_BRANCH:
        raise UserError(
            f"DROP TABLE {'.'.join(stmt.name)} names branch {target.branch!r}: "
            f"use ALTER TABLE {target.identifier} DROP BRANCH {target.branch}"
        )
    ctx.catalog.drop_table(target.identifier, purge=stmt.purge)
    purged = " and purged its files" if stmt.purge else ""
    return OpResult(message=f"dropped table {target.identifier}{purged}")


def rename_table(ctx: OpContext, stmt: RenameTable) -> OpResult:
    target = ctx.resolve_target(stmt.name)
    if target.branch != MAIN_BRANCH:
        raise UserError(f"cannot rename {'.'.join(stmt.name)}: it names a branch, not a table")
    source = target.identifier
    if len(stmt.new_name) == 1:  # Spark: a bare new name keeps the namespace
        new = TableIdentifier(source.namespace, stmt.new_name[0])
    else:
        new = ctx.new_identifier(stmt.new_name)
    if new == source:
        raise UserError(f"cannot rename {source} to itself")
    check_new_table(new)
    if ctx.catalog.table_exists(new):
        raise AlreadyExistsError(f"cannot rename {source} to {new}: table {new} already exists")
    if not ctx.catalog.namespace_exists(new.namespace):
        raise NotFoundError(
            f"cannot rename {source} to {new}: namespace {namespace_display(new.namespace)} does not exist"
        )
    ctx.catalog.rename_table(source, new)
    return OpResult(message=f"renamed table {source} to {new}")

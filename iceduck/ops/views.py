"""Iceberg views: ``CREATE [OR REPLACE] VIEW``, ``ALTER VIEW``, ``DROP VIEW`` on the catalog.

A view version holds the query in two representations (the view spec: "A view version can
have more than one representation. All representations for a version must express the same
underlying definition"): ``duckdb``, the text as written, and ``spark``, sqlglot's
transpilation checked by :func:`iceduck.sql.view_sql.spark_representation` -- or only
``duckdb`` when the view says ``TBLPROPERTIES ('iceduck.spark-representation' = 'false')``.

What the version records, as Spark 3.5 with Iceberg 1.10 records it (checked on the views
Spark wrote: ``tests/fixtures/views``):

* ``default-namespace``: the session's current namespace (``USE``), the namespace a one-part
  name of the query means; with none in use, the view's own namespace (where a one-part
  name would be looked for by a reader with no other hint). ``default-catalog`` is left out,
  as Spark leaves it out when the view's catalog is the current one: a reader then reads the
  names in the catalog holding the view, whatever it calls that catalog;
* the schema: the query's columns as DuckDB describes them, in Iceberg types (as for
  ``CREATE TABLE AS``), renamed by the column list and given its comments (schema field
  ``doc``), field ids from 0 as Spark numbers a view's schema;
* properties: those given, ``comment`` for the view's ``COMMENT``, and Spark's
  ``spark.query-column-names`` (the query's own output names, before the column list renames
  them); ``summary`` ``engine-name`` ``iceduck`` and ``engine-version``;
* ``replace.drop-dialect.allowed`` = ``true`` unless the statement or the view says otherwise:
  Spark writes only ``spark``, and Java's rule ("Cannot replace view due to loss of view
  dialects") would keep every Spark job from replacing a view iceduck made; after Spark's
  replace the ``duckdb`` text would be stale anyway, and iceduck reads the ``spark`` one.

The query must run when the view is made (as Spark analyses it): it is qualified first as
a reader will qualify it (:func:`iceduck.sql.view_sql.qualified`), so the session's own
objects -- temporary tables and views, variables -- are never what a catalog view reads, and
a one-part name that is one of them is refused by name (Spark: "Not allowed to create a
permanent view by referencing a temporary view").
"""

from __future__ import annotations

import re

from iceduck.catalog.base import LoadedView, Namespace, TableIdentifier
from iceduck.catalog.names import namespace_display
from iceduck.engine.result_types import query_columns
from iceduck.errors import AlreadyExistsError, NotFoundError, UserError
from iceduck.ops.context import OpContext, OpResult
from iceduck.ops.rows import params_for
from iceduck.spec.schema import Schema
from iceduck.spec.types import IcebergType, NestedField, StructType
from iceduck.spec.view_metadata import (
    COMMENT,
    REPLACE_DROP_DIALECT_ALLOWED,
    ViewRepresentation,
    add_view_version,
    new_view,
    set_view_properties,
)
from iceduck.sql.create_statement import spark_type
from iceduck.sql.view_sql import has_parameters, one_part_names, qualified, spark_representation
from iceduck.sql.view_statements import (
    SPARK_REPRESENTATION,
    AlterViewAs,
    CreateView,
    DropCatalogView,
    RenameView,
    SetViewProperties,
    UnsetViewProperties,
    ViewColumn,
)
from iceduck.txn.fresh_ids import counter
from iceduck.txn.schema_tree import assign_fresh_ids
from iceduck.version import __version__

#: Spark's property of a view's query output names (``SparkView.QUERY_COLUMN_NAMES``)
QUERY_COLUMN_NAMES = "spark.query-column-names"
#: a view's types: any Iceberg type a query may yield (views have no format version)
_TYPES_OF_FORMAT = 3


def create_view(ctx: OpContext, stmt: CreateView) -> OpResult:
    identifier = ctx.new_identifier(stmt.name)
    catalog = ctx.catalog
    exists = catalog.view_exists(identifier)
    if exists and stmt.if_not_exists:
        return OpResult(message=f"view {identifier} already exists")
    if exists and not stmt.or_replace:
        raise AlreadyExistsError(
            f"view {identifier} already exists in catalog {catalog.name!r} "
            "(CREATE OR REPLACE VIEW replaces it)"
        )
    if not exists and catalog.table_exists(identifier):
        raise AlreadyExistsError(
            f"cannot create view {identifier}: a table of that name exists in catalog {catalog.name!r} "
            "(tables and views share one namespace of names)"
        )
    if not catalog.namespace_exists(identifier.namespace):
        shown = namespace_display(identifier.namespace)
        raise NotFoundError(
            f"cannot create view {identifier}: namespace {shown} does not exist "
            f"(CREATE NAMESPACE {shown} first)"
        )
    properties = dict(stmt.properties)
    if stmt.comment is not None:
        properties[COMMENT] = stmt.comment
    default_namespace = ctx.namespace or identifier.namespace
    schema, version_properties, representations = _version(
        ctx, identifier, stmt.query, stmt.columns, default_namespace, properties
    )
    properties.update(version_properties)
    summary = _summary()
    base = catalog.load_view(identifier) if exists else None
    if base is None or REPLACE_DROP_DIALECT_ALLOWED not in base.metadata.properties:
        properties.setdefault(REPLACE_DROP_DIALECT_ALLOWED, "true")
    if base is not None:
        metadata = add_view_version(
            set_view_properties(base.metadata, properties, ()),
            schema, representations, default_namespace, None, summary, ctx.now_ms(),
        )  # fmt: skip
        catalog.commit_view(base, metadata)
        return OpResult(message=f"replaced view {identifier}")
    location = catalog.default_view_location(identifier)
    metadata = new_view(location, schema, representations, default_namespace, None, summary, properties)
    catalog.create_view(identifier, metadata)
    return OpResult(message=f"created view {identifier}")


def alter_view_as(ctx: OpContext, stmt: AlterViewAs) -> OpResult:
    """A new version from the query; the properties stay, the column list does not (Spark's
    ``ALTER VIEW ... AS`` keeps no aliases or comments of the columns)."""
    base = _load(ctx, stmt.name)
    default_namespace = ctx.namespace or base.identifier.namespace
    properties = dict(base.metadata.properties)
    schema, version_properties, representations = _version(
        ctx, base.identifier, stmt.query, (), default_namespace, properties
    )
    metadata = add_view_version(
        set_view_properties(base.metadata, version_properties, ()),
        schema, representations, default_namespace, None, _summary(), ctx.now_ms(),
    )  # fmt: skip
    ctx.catalog.commit_view(base, metadata)
    return OpResult(message=f"altered view {base.identifier}")


def set_properties(ctx: OpContext, stmt: SetViewProperties) -> OpResult:
    base = _load(ctx, stmt.name)
    ctx.catalog.commit_view(base, set_view_properties(base.metadata, stmt.properties, ()))
    return OpResult(message=f"altered view {base.identifier}")


def unset_properties(ctx: OpContext, stmt: UnsetViewProperties) -> OpResult:
    base = _load(ctx, stmt.name)
    missing = [k for k in stmt.keys if k not in base.metadata.properties]
    if missing and not stmt.if_exists:
        raise UserError(
            f"view {base.identifier} has no property {', '.join(missing)} "
            "(UNSET TBLPROPERTIES IF EXISTS skips it)"
        )
    ctx.catalog.commit_view(base, set_view_properties(base.metadata, {}, stmt.keys))
    return OpResult(message=f"altered view {base.identifier}")


def rename_view(ctx: OpContext, stmt: RenameView) -> OpResult:
    base = _load(ctx, stmt.name)
    if len(stmt.new_name) == 1:  # Spark: a one-part new name stays in the view's namespace
        target = TableIdentifier(base.identifier.namespace, stmt.new_name[0])
    else:
        target = ctx.new_identifier(stmt.new_name)
    ctx.catalog.rename_view(base.identifier, target)
    return OpResult(message=f"renamed view {base.identifier} to {target}")


def drop_view(ctx: OpContext, stmt: DropCatalogView) -> OpResult:
    identifier = ctx.new_identifier(stmt.name)
    if not ctx.catalog.view_exists(identifier):
        if ctx.catalog.table_exists(identifier):
            raise UserError(f"{identifier} is a table, not a view: DROP TABLE {identifier}")
        if stmt.if_exists:
            return OpResult(message=f"no view {identifier} to drop")
        raise NotFoundError(f"view {identifier} not found in catalog {ctx.catalog.name!r}")
    ctx.catalog.drop_view(identifier)
    return OpResult(message=f"dropped view {identifier}")


def _load(ctx: OpContext, name: tuple[str, ...]) -> LoadedView:
    identifier = ctx.new_identifier(name)
    if not ctx.catalog.view_exists(identifier):
        if ctx.catalog.table_exists(identifier):
            raise UserError(f"{identifier} is a table, not a view: ALTER TABLE {identifier}")
        raise NotFoundError(f"view {identifier} not found in catalog {ctx.catalog.name!r}")
    return ctx.catalog.load_view(identifier)


def _summary() -> dict[str, str]:
    return {"engine-name": "iceduck", "engine-version": __version__}


def _version(
    ctx: OpContext,
    identifier: TableIdentifier,
    query: str,
    columns: tuple[ViewColumn, ...],
    default_namespace: Namespace,
    properties: dict[str, str],
) -> tuple[Schema, dict[str, str], tuple[ViewRepresentation, ...]]:
    """A version's schema, the properties it sets and its representations (module docstring)."""
    query = query.strip().rstrip(";").strip()
    shown = str(identifier)
    if has_parameters(query):
        raise UserError(f"view {shown}: a view's query cannot take parameters")
    for name in one_part_names(query):
        kind = ctx.session_object(name)
        if kind is not None:
            raise UserError(
                f"view {shown} reads {name}, a {kind} of this session: a catalog view cannot read the "
                f"session's own objects (they vanish with it); name an Iceberg table or view instead"
            )
    text = qualified(query, ctx.catalog.name, default_namespace, ())
    sql = ctx.prepare_query(text) if ctx.prepare_view is None else ctx.prepare_view(text, identifier)
    fields = query_columns(ctx.duck, sql, params_for(sql, ctx.params), _TYPES_OF_FORMAT)
    if columns and len(columns) != len(fields):
        raise UserError(f"view {shown} names {len(columns)} columns but its query has {len(fields)}")
    output_names = [f.name for f in fields]
    if columns:
        fields = [
            NestedField(f.field_id, c.name, f.field_type, f.required, c.comment)
            for f, c in zip(fields, columns, strict=True)
        ]
    names = [f.name.lower() for f in fields]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(
            f"view {shown}: column {', '.join(duplicates)} appears twice: name them (AS or a column list)"
        )
    struct = assign_fresh_ids(StructType(tuple(fields)), counter(-1))
    assert isinstance(struct, StructType)
    schema = Schema(struct.fields, 0, ())
    representations = [ViewRepresentation(query, "duckdb")]
    if _writes_spark(properties, shown):
        typed = [
            (name, _spark_cast_type(f.field_type))
            for name, f in zip(output_names, schema.fields, strict=True)
        ]
        representations.append(ViewRepresentation(spark_representation(query, shown, typed), "spark"))
    return schema, {QUERY_COLUMN_NAMES: ",".join(output_names)}, tuple(representations)


#: words of Spark type names (:func:`spark_type`) that name no type Spark 3.5 casts to
_NO_SPARK_CAST = re.compile(r"\b(?:TIME|TIMESTAMP_NS|TIMESTAMPTZ_NS|UUID|VARIANT|FIXED)\b")


def _spark_cast_type(t: IcebergType) -> str | None:
    """The Spark type a view column is cast to in the ``spark`` text, or None (left as is)."""
    name = spark_type(t)
    return None if _NO_SPARK_CAST.search(name) else name


def _writes_spark(properties: dict[str, str], view: str) -> bool:
    value = properties.get(SPARK_REPRESENTATION, "true").strip().lower()
    if value not in ("true", "false"):
        raise UserError(f"view {view}: {SPARK_REPRESENTATION} is true or false, not {value!r}")
    return value == "true"

"""A table as Spark's ``SHOW CREATE TABLE`` prints it, and the properties Spark's ``SHOW
TBLPROPERTIES`` lists.

The statement has the layout of Spark 3.5's ``ShowCreateTableExec`` over Iceberg's
``SparkTable`` (compared with Spark's in tests/interop/test_forms_spark.py), one clause
per line::

    CREATE TABLE iceduck.db.t (
      id BIGINT NOT NULL COMMENT 'key',
      data STRING,
      ts TIMESTAMP)
    USING iceberg
    PARTITIONED BY (bucket(16, id), days(ts), truncate(4, data))
    COMMENT 'orders'
    LOCATION '/warehouse/db/t'
    TBLPROPERTIES (
      'format-version' = '2',
      'write.parquet.compression-codec' = 'zstd')

Types are Spark's names (``TIMESTAMP`` is Iceberg's ``timestamptz``, ``TIMESTAMP_NTZ`` its
``timestamp``), except where Spark has none or a lossy one: ``UUID``, ``FIXED(n)``, ``TIME``,
``TIMESTAMP_NS``, ``TIMESTAMPTZ_NS``, ``VARIANT`` keep Iceberg's name. The statement is
one iceduck's CREATE TABLE runs to make the same table (same columns, types, defaults,
comments, partitioning, sort order and properties), so it differs from Spark's where
Spark's cannot be run again:

* a bucket is a ``PARTITIONED BY`` term (``bucket(16, id)``), not the Hive clauses Spark
  prints (``CLUSTERED BY (id) INTO 16 BUCKETS``, which loses the term's place in the spec);
* a partition field not named as Iceberg names it by default gets ``AS name``;
* a sort order is iceduck's ``ORDERED BY (...)`` clause (Spark shows it as a property);
* ``TBLPROPERTIES`` lists ``format-version`` and the stored properties -- not the derived
  ``current-snapshot-id``, ``format``, ``sort-order`` and ``identifier-fields`` Spark adds,
  which a CREATE TABLE would refuse (``current-snapshot-id`` is reserved) or store as
  plain properties (:func:`shown_properties` lists them, as SHOW TBLPROPERTIES does);
* a column's ``DEFAULT`` (its write default) is shown, and quotes in text are doubled
  (``'it''s'``) as DuckDB reads them.

As in Spark, a list element or map value declared required reads as optional (no DDL
declares it), and identifier fields are not part of the statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from iceduck.catalog.base import TableIdentifier
from iceduck.spec import properties as tp
from iceduck.spec.partition import PartitionField, partition_name
from iceduck.spec.schema import Schema
from iceduck.spec.sort import NullOrder, SortDirection, SortField, SortOrder
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from iceduck.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
    VariantType,
)
from iceduck.spec.view_metadata import ViewMetadata
from iceduck.sql.describe import default_sql

#: the property Spark shows as the ``COMMENT`` clause (and hides from TBLPROPERTIES)
COMMENT = "comment"
#: properties Spark never lists (``CatalogV2Util.TABLE_RESERVED_PROPERTIES``)
_SPARK_HIDDEN = frozenset({COMMENT, "location", "provider", "owner", "external", "is_managed_location"})

_SPARK_TYPES: dict[type, str] = {
    BooleanType: "BOOLEAN",
    IntegerType: "INT",
    LongType: "BIGINT",
    FloatType: "FLOAT",
    DoubleType: "DOUBLE",
    DateType: "DATE",
    TimeType: "TIME",
    TimestampType: "TIMESTAMP_NTZ",
    TimestamptzType: "TIMESTAMP",
    TimestampNanoType: "TIMESTAMP_NS",
    TimestamptzNanoType: "TIMESTAMPTZ_NS",
    StringType: "STRING",
    UUIDType: "UUID",
    BinaryType: "BINARY",
    VariantType: "VARIANT",
}

#: Spark's name of each time transform (``Expressions.years``...)
_TIME_TRANSFORMS: dict[type, str] = {
    YearTransform: "years",
    MonthTransform: "months",
    DayTransform: "days",
    HourTransform: "hours",
}

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]+")


def quote_name(part: str) -> str:
    """Spark's ``quoteIfNeeded``: a name of letters, digits and ``_`` (not all digits) as is,
    anything else in backquotes."""
    if _PLAIN_NAME.fullmatch(part) and not part.isdigit():
        return part
    return "`" + part.replace("`", "``") + "`"


def quote_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def spark_type(t: IcebergType) -> str:
    """The type as Spark's ``DataType.sql`` writes it (see the module docstring)."""
    if isinstance(t, DecimalType):
        return f"DECIMAL({t.precision},{t.scale})"
    if isinstance(t, FixedType):
        return f"FIXED({t.length})"
    if isinstance(t, StructType):
        return "STRUCT<" + ", ".join(_field(f, nested=True) for f in t.fields) + ">"
    if isinstance(t, ListType):
        return f"ARRAY<{spark_type(t.element_type)}>"
    if isinstance(t, MapType):
        return f"MAP<{spark_type(t.key_type)}, {spark_type(t.value_type)}>"
    return _SPARK_TYPES.get(type(t), str(t).upper())


def _field(f: NestedField, nested: bool = False) -> str:
    """``name TYPE [NOT NULL] [DEFAULT v] [COMMENT 'doc']`` (Spark's ``StructField.toDDL``;
    a struct's field is ``name: TYPE ...``, without a default, which no DDL declares)."""
    text = f"{quote_name(f.name)}{':' if nested else ''} {spark_type(f.field_type)}"
    if f.required:
        text += " NOT NULL"
    default = None if nested or f.write_default is None else default_sql(f.field_type, f.write_default)
    if default is not None:
        text += f" DEFAULT {default}"
    if f.doc is not None:
        text += f" COMMENT {quote_text(f.doc)}"
    return text


def _lines(items: Iterable[str]) -> str:
    """Spark's ``concatByMultiLines``: ``(\\n  a,\\n  b)\\n``."""
    return "(\n  " + ",\n  ".join(items) + ")\n"


def _source(schema: Schema, source_id: int) -> str:
    name = schema.column_name(source_id) or str(source_id)
    return ".".join(quote_name(p) for p in name.split("."))


def transform_sql(transform: Transform, source: str) -> str:
    """A transform of ``source`` as Spark's ``Transform.describe`` writes it."""
    if isinstance(transform, IdentityTransform):
        return source
    if isinstance(transform, BucketTransform):
        return f"bucket({transform.num_buckets}, {source})"
    if isinstance(transform, TruncateTransform):
        return f"truncate({transform.width}, {source})"
    name = _TIME_TRANSFORMS.get(type(transform))
    return f"{name}({source})" if name is not None else f"{transform}({source})"


def _partition_term(schema: Schema, f: PartitionField) -> str:
    source_name = schema.column_name(f.source_id) or str(f.source_id)
    term = transform_sql(f.transform, _source(schema, f.source_id))
    if f.name != partition_name(source_name, f.transform, with_parameter=False):
        term += f" AS {quote_name(f.name)}"
    return term


def _sort_term(schema: Schema, f: SortField) -> str:
    direction = "ASC" if f.direction is SortDirection.ASC else "DESC"
    nulls = "NULLS FIRST" if f.null_order is NullOrder.NULLS_FIRST else "NULLS LAST"
    return f"{transform_sql(f.transform, _source(schema, f.source_id))} {direction} {nulls}"


def describe_sort_order(schema: Schema, order: SortOrder) -> str:
    """Spark's ``sort-order`` property: ``id ASC NULLS FIRST, days(ts) DESC NULLS LAST``."""
    return ", ".join(_sort_term(schema, f) for f in order.fields)


def create_table_sql(catalog: str, identifier: TableIdentifier, metadata: TableMetadata) -> str:
    """``SHOW CREATE TABLE``'s statement for the table (see the module docstring)."""
    schema = metadata.schema()
    name = ".".join(quote_name(p) for p in (catalog, *identifier.namespace, identifier.name))
    text = f"CREATE TABLE {name} " + _lines(_field(f) for f in schema.fields) + "USING iceberg\n"
    spec = [f for f in metadata.spec().fields if not f.transform.is_void]
    if spec:
        text += "PARTITIONED BY (" + ", ".join(_partition_term(schema, f) for f in spec) + ")\n"
    order = metadata.sort_order()
    if not order.is_unsorted:
        text += "ORDERED BY (" + ", ".join(_sort_term(schema, f) for f in order.fields) + ")\n"
    comment = metadata.properties.get(COMMENT)
    if comment is not None:
        text += f"COMMENT {quote_text(comment)}\n"
    text += f"LOCATION {quote_text(metadata.location)}\n"
    stored = {tp.FORMAT_VERSION: str(metadata.format_version)}
    stored.update((k, v) for k, v in metadata.properties.items() if k not in _SPARK_HIDDEN)
    text += "TBLPROPERTIES " + _lines(f"{quote_text(k)} = {quote_text(v)}" for k, v in sorted(stored.items()))
    return text


def shown_properties(metadata: TableMetadata) -> dict[str, str]:
    """The properties Spark's ``SHOW TBLPROPERTIES`` lists for an Iceberg table, sorted by
    key: those ``SparkTable.properties()`` derives from the metadata (``current-snapshot-id``,
    ``format``, ``format-version``, ``sort-order``, ``identifier-fields``) and the stored
    ones, less those Spark reserves (``comment``, ``location``, ``provider``, ``owner``...)."""
    current = metadata.current_snapshot()
    file_format = metadata.properties.get("write.format.default", "parquet")
    derived = {
        "current-snapshot-id": str(current.snapshot_id) if current is not None else "none",
        "format": f"iceberg/{file_format}",
        "format-version": str(metadata.format_version),
    }
    schema = metadata.schema()
    order = metadata.sort_order()
    if not order.is_unsorted:
        derived["sort-order"] = describe_sort_order(schema, order)
    if schema.identifier_field_ids:
        names = [schema.column_name(i) or str(i) for i in schema.identifier_field_ids]
        derived["identifier-fields"] = "[" + ",".join(names) + "]"
    shown = {k: v for k, v in metadata.properties.items() if k not in _SPARK_HIDDEN and k not in derived}
    shown.update(derived)
    return dict(sorted(shown.items()))


#: view properties ``SHOW CREATE TABLE`` of a view does not list (Spark's reserved ones)
_VIEW_HIDDEN = frozenset(
    {COMMENT, "engine_version", "create_engine_version", "spark.query-column-names", "owner"}
)


def create_view_sql(catalog: str, identifier: TableIdentifier, metadata: ViewMetadata) -> str:
    """``SHOW CREATE TABLE`` of a view, as Iceberg's ``ShowCreateV2ViewExec`` writes it in
    Spark (the columns with their comments, ``COMMENT``, ``TBLPROPERTIES``, ``AS`` query),
    the query in the ``duckdb`` representation when the view has one (a statement iceduck
    runs again), else its first."""
    version = metadata.current_version
    schema = metadata.schema_by_id(version.schema_id)
    name = ".".join(quote_name(p) for p in (catalog, *identifier.namespace, identifier.name))
    columns = (
        quote_name(f.name) + (f" COMMENT {quote_text(f.doc)}" if f.doc is not None else "")
        for f in schema.fields
    )
    text = f"CREATE VIEW {name} " + _lines(columns)
    comment = metadata.properties.get(COMMENT)
    if comment is not None:
        text += f"COMMENT {quote_text(comment)}\n"
    shown = {k: v for k, v in metadata.properties.items() if k not in _VIEW_HIDDEN}
    if shown:
        pairs = (f"{quote_text(k)} = {quote_text(v)}" for k, v in sorted(shown.items()))
        text += "TBLPROPERTIES " + _lines(pairs)
    rep = version.representation("duckdb") or version.representations[0]
    return text + f"AS\n{rep.sql}\n"

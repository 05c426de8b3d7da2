"""Spark's introspection of a table: ``DESCRIBE [TABLE] EXTENDED|FORMATTED t``, ``SHOW
COLUMNS FROM|IN t [FROM|IN ns]`` and ``SHOW PARTITIONS t``, with the rows Spark 3.5 (and
the Iceberg 1.10 runtime) shows for the same table (compared with Spark's in
tests/interop/test_sql_spark_describe_spark.py).

``DESCRIBE EXTENDED t`` (``FORMATTED`` is the same) has columns ``col_name``, ``data_type``,
``comment`` and the sections of Spark's ``DescribeTableExec``:

* a row per top-level column: its name, Spark's type (``bigint``, ``struct<x:int,y:string>``:
  :func:`spark_simple_type`) and its doc;
* the partitioning of the current spec: when every term is an identity, ``# Partition
  Information``, ``# col_name | data_type | comment`` and a row per column (as a column's
  row); otherwise an empty row, ``# Partitioning`` and ``Part <i> | <transform>``
  (``bucket(4, id)``, ``days(ts)``, ``truncate(2, name)``); nothing when unpartitioned;
* ``# Metadata Columns``: Iceberg's ``_spec_id``, ``_partition`` (the table's partition
  type over every spec), ``_file``, ``_pos``, ``_deleted``, ``_row_id``,
  ``_last_updated_sequence_number``;
* ``# Detailed Table Information``: ``Name`` (``catalog.ns.t``), ``Type`` (``EXTERNAL``
  with an ``external`` property, else ``MANAGED``), then those of the reserved properties
  the table has -- ``Comment``, ``Location`` (always), ``Provider`` (``iceberg``),
  ``Owner`` (the ``owner`` property: Spark stores the OS user there when it creates a
  table; a table iceduck created has none, and neither Spark nor iceduck show the row) --
  and ``Table Properties``: ``[k=v,...]``, SHOW TBLPROPERTIES' properties, a value whose
  key or text looks secret (Spark's ``spark.redaction.regex``) shown ``*********(redacted)``.

Other cells Spark leaves empty are ``''``; a column without a doc has a NULL comment.

``SHOW COLUMNS`` and ``SHOW PARTITIONS`` are refused by Spark 3.5 on an Iceberg table
(``SHOW COLUMNS is not supported for v2 tables``; ``does not support partition
management``); iceduck answers them as Spark does for a table that supports them:

* ``SHOW COLUMNS``: column ``col_name``, a row per top-level column (Spark's
  ``ShowColumnsCommand``); with ``IN ns`` a one-part table name is looked up in ``ns``, and
  a qualified name in another namespace is an error, as in Spark;
* ``SHOW PARTITIONS``: column ``partition``, Hive-style paths
  (:mod:`iceduck.sql.partition_paths`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import UnsupportedError, UserError
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.transforms import IdentityTransform
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
    TimestampType,
    TimestamptzType,
    UUIDType,
)
from iceduck.sql.create_statement import quote_name, shown_properties, transform_sql
from iceduck.sql.parse import tokenize

EXTENDED = "EXTENDED"
COLUMNS = "COLUMNS"
PARTITIONS = "PARTITIONS"

#: the columns of DESCRIBE EXTENDED, as Spark names them
DESCRIBE_COLUMNS = ("col_name", "data_type", "comment")

#: Spark's ``simpleString`` of each Iceberg primitive (Iceberg's ``TypeToSparkType``: a
#: uuid is a string, a fixed a binary); types Spark has none for keep Iceberg's name
_SIMPLE: dict[type, str] = {
    BooleanType: "boolean",
    IntegerType: "int",
    LongType: "bigint",
    FloatType: "float",
    DoubleType: "double",
    DateType: "date",
    TimestamptzType: "timestamp",
    TimestampType: "timestamp_ntz",
    StringType: "string",
    UUIDType: "string",
    BinaryType: "binary",
    FixedType: "binary",
}

#: Spark's ``spark.sql.debug.maxToStringFields`` (default 25): a wider struct's type is cut short
MAX_TO_STRING_FIELDS = 25

#: Iceberg's metadata columns as ``SparkTable.metadataColumns()`` lists them (after
#: ``_partition``, whose type is the table's)
_METADATA_HEAD = (("_spec_id", "int"),)
_METADATA_TAIL = (
    ("_file", "string"),
    ("_pos", "bigint"),
    ("_deleted", "boolean"),
    ("_row_id", "bigint"),
    ("_last_updated_sequence_number", "bigint"),
)

#: ``CatalogV2Util.TABLE_RESERVED_PROPERTIES``, in order: shown as their own rows
_RESERVED = ("comment", "location", "provider", "owner", "external", "is_managed_location")

#: Spark's default ``spark.redaction.regex`` and what a redacted value shows
_REDACT = re.compile(r"(?i)secret|password|token|access[.]?key")
REDACTED = "*********(redacted)"

Rows = dict[str, list[str | None]]

#: words after DESCRIBE EXTENDED's table name that are no column name (a syntax error)
_AFTER_NAME = frozenset({"VERSION", "TIMESTAMP", "FOR", "AS", "AT"})


@dataclass(frozen=True)
class TableInfo:
    """``DESCRIBE EXTENDED name`` (``what`` :data:`EXTENDED`), ``SHOW COLUMNS FROM name``
    (:data:`COLUMNS`) or ``SHOW PARTITIONS name`` (:data:`PARTITIONS`); ``name`` already
    qualified by ``SHOW COLUMNS``' ``IN ns``."""

    what: str
    name: tuple[str, ...]


def parse_table_info(text: str) -> TableInfo | None:
    """The statement, or None when ``text`` is another DESCRIBE or SHOW (told by its first
    words, so a plain DESCRIBE never loads the DDL grammar)."""
    words = [t.text.upper() for t in tokenize(text)[:4]]
    start = 2 if words[1:2] == ["TABLE"] else 1
    described = words[:1] in (["DESCRIBE"], ["DESC"]) and words[start : start + 1] in (
        ["EXTENDED"],
        ["FORMATTED"],
    )
    if not described and words[:2] not in (["SHOW", "COLUMNS"], ["SHOW", "PARTITIONS"]):
        return None
    from iceduck.sql.ddl_tokens import Cursor, prepare  # the DDL grammar loads on first use

    body, backticks = prepare(text)
    c = Cursor.of(body, spark=backticks)
    if c.accept("DESCRIBE") or c.accept("DESC"):
        c.accept("TABLE")
        if not (c.word() in ("EXTENDED", "FORMATTED") and c.peek(1) is not None):
            return None  # DESCRIBE t, or DESCRIBE extended: a table named so
        c.next()
        name = c.name()
        if c.at("PARTITION"):
            raise UnsupportedError(
                "DESCRIBE EXTENDED ... PARTITION (...) is not supported: Spark refuses it "
                "for Iceberg tables; SHOW PARTITIONS lists a table's partitions"
            )
        if not c.done() and c.word() not in _AFTER_NAME:
            c.name("a column name")
            c.end()  # DESCRIBE EXTENDED t col: Spark's description of one column
            raise UnsupportedError(
                "DESCRIBE EXTENDED of a column is not supported: DESCRIBE EXTENDED t "
                "describes the table, its columns included"
            )
        c.end()
        return TableInfo(EXTENDED, name)
    if not c.accept("SHOW"):
        return None
    if c.accept("COLUMNS"):
        if not (c.accept("FROM") or c.accept("IN")):
            raise c.error("FROM or IN after SHOW COLUMNS")
        name = c.name()
        if c.accept("FROM") or c.accept("IN"):
            name = qualified(name, c.name("a namespace"))
        c.end()
        return TableInfo(COLUMNS, name)
    if c.accept("PARTITIONS"):
        name = c.name()
        if c.at("PARTITION"):
            raise UnsupportedError(
                "SHOW PARTITIONS ... PARTITION (...) is not supported: SHOW PARTITIONS t "
                "lists them all (filter SELECT partition FROM t.partitions instead)"
            )
        c.end()
        return TableInfo(PARTITIONS, name)
    return None


def qualified(name: tuple[str, ...], namespace: tuple[str, ...]) -> tuple[str, ...]:
    """``SHOW COLUMNS FROM name IN namespace``'s table: a one-part name in ``namespace``; a
    qualified one must be in it already (Spark: "SHOW COLUMNS with conflicting namespaces")."""
    if len(name) == 1:
        return (*namespace, *name)
    shared = min(len(name) - 1, len(namespace))  # a leading catalog name on either side
    written = [p.lower() for p in name[-1 - shared : -1]]
    if written != [p.lower() for p in namespace[len(namespace) - shared :]]:
        raise UserError(
            f"SHOW COLUMNS with conflicting namespaces: {'.'.join(namespace)} != {'.'.join(name[:-1])}"
        )
    return name


def spark_simple_type(t: IcebergType) -> str:
    """The type as Spark's ``DataType.simpleString`` writes it: ``bigint``, ``decimal(9,2)``,
    ``array<string>``, ``map<string,int>``, ``struct<x:int,y:string>``; a struct of more than
    :data:`MAX_TO_STRING_FIELDS` fields shows the first 24 and ``... <n> more fields``."""
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, StructType):
        fields = [f"{f.name}:{spark_simple_type(f.field_type)}" for f in t.fields]
        if len(fields) > MAX_TO_STRING_FIELDS:  # Spark's truncatedString
            kept = MAX_TO_STRING_FIELDS - 1
            fields = [*fields[:kept], f"... {len(fields) - kept} more fields"]
        return "struct<" + ",".join(fields) + ">"
    if isinstance(t, ListType):
        return f"array<{spark_simple_type(t.element_type)}>"
    if isinstance(t, MapType):
        return f"map<{spark_simple_type(t.key_type)},{spark_simple_type(t.value_type)}>"
    return _SIMPLE.get(type(t), str(t).lower())


def show_columns(metadata: TableMetadata) -> Rows:
    """``SHOW COLUMNS``' rows: the current schema's top-level column names."""
    return {"col_name": [f.name for f in metadata.schema().fields]}


def describe_extended(
    catalog: str, identifier: TableIdentifier, metadata: TableMetadata, partition_type: StructType
) -> Rows:
    """``DESCRIBE EXTENDED``'s rows (see the module docstring); ``partition_type`` is the
    table's partition type over all its specs (the ``_partition`` metadata column's)."""
    schema = metadata.schema()
    rows: list[tuple[str, str, str | None]] = [_column_row(f) for f in schema.fields]
    spec = [f for f in metadata.spec().fields if not f.transform.is_void]
    if spec and all(isinstance(f.transform, IdentityTransform) for f in spec):
        rows.append(("# Partition Information", "", ""))
        rows.append(("# col_name", "data_type", "comment"))
        for f in spec:
            name = schema.column_name(f.source_id) or str(f.source_id)
            row = _column_row(schema.find_field(f.source_id))
            rows.append((".".join(quote_name(p) for p in name.split(".")), row[1], row[2]))
    elif spec:
        rows += [("", "", ""), ("# Partitioning", "", "")]
        for i, f in enumerate(spec):
            name = schema.column_name(f.source_id) or str(f.source_id)
            source = ".".join(quote_name(p) for p in name.split("."))
            rows.append((f"Part {i}", transform_sql(f.transform, source), ""))
    rows += [("", "", ""), ("# Metadata Columns", "", "")]
    metadata_columns = (*_METADATA_HEAD, ("_partition", spark_simple_type(partition_type)), *_METADATA_TAIL)
    rows += [(name, type_, "") for name, type_ in metadata_columns]
    rows += [("", "", ""), ("# Detailed Table Information", "", "")]
    rows += [(name, value, "") for name, value in table_details(catalog, identifier, metadata)]
    return {
        "col_name": [r[0] for r in rows],
        "data_type": [r[1] for r in rows],
        "comment": [r[2] for r in rows],
    }


def _column_row(f: NestedField) -> tuple[str, str, str | None]:
    return f.name, spark_simple_type(f.field_type), f.doc


def table_details(
    catalog: str, identifier: TableIdentifier, metadata: TableMetadata
) -> list[tuple[str, str]]:
    """``# Detailed Table Information``'s (name, value) pairs: ``Name``, ``Type``, the reserved
    properties the table has (``SparkTable.properties()`` adds ``location`` and ``provider``),
    ``Table Properties``."""
    stored = metadata.properties
    reserved = {k: stored[k] for k in _RESERVED if k in stored}
    reserved.update(location=metadata.location, provider="iceberg")
    details = [
        ("Name", f"{catalog}.{identifier}"),
        ("Type", "EXTERNAL" if "external" in stored else "MANAGED"),
    ]
    # ``external`` is said by ``Type`` alone: Spark's addTableDetails filters it out of these rows
    details += [(k.capitalize(), reserved[k]) for k in _RESERVED if k in reserved and k != "external"]
    shown = [f"{k}={redacted(k, v)}" for k, v in shown_properties(metadata).items()]
    details.append(("Table Properties", "[" + ",".join(shown) + "]"))
    return details


def redacted(key: str, value: str) -> str:
    """Spark's ``Utils.redact``: a value whose key or text matches the redaction pattern is hidden."""
    return REDACTED if _REDACT.search(key) or _REDACT.search(value) else value

"""The Iceberg catalog's rows of DuckDB's catalog views and table functions, in DuckDB's
columns and with DuckDB's meanings, added to DuckDB's own rows.

A tool that lists tables through ``information_schema.tables`` or ``duckdb_columns()``
must see an Iceberg table as it would see a DuckDB table of the same columns: the same
column names and types (asked of DuckDB, :func:`own_columns`, so they are DuckDB's own),
``table_type`` ``BASE TABLE``, ``data_type`` as DuckDB spells the type the Iceberg type is
read as (:func:`iceduck.engine.types.duckdb_type`, spelled by DuckDB's ``typeof``), the
numeric precision, radix and scale DuckDB gives that type, ``is_nullable`` from the
field's ``required``, a field's ``doc`` as the column comment, the ``comment`` property
as the table's. A table's schema is its Iceberg namespace (levels joined by ``.``), its
database the catalog's name. Iceberg tables have no DuckDB oid: each gets a stable one
from its name (:func:`oid`), so the joins DuckDB's own queries make on ``table_oid``
(``SHOW ALL TABLES``) pair its tables and columns.

:func:`attach_rows` registers the Iceberg rows on the statement's cursor as an Arrow table
and returns the relation that replaces the reference: DuckDB's rows ``UNION ALL`` these.
No object is created in DuckDB's catalog, so no other query can read an empty stand-in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iceduck.engine import queries
from iceduck.engine.types import duckdb_type, quote_identifier
from iceduck.errors import UnsupportedError
from iceduck.spec.schema import Schema
from iceduck.spec.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UnknownType,
    UUIDType,
    VariantType,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from iceduck.engine.connection import Duck

#: DuckDB's ``LogicalTypeId`` of the types Iceberg types are read as (``duckdb_columns()``'s
#: ``data_type_id``); BLOB for fixed, binary and the geospatial types
_TYPE_IDS: dict[type, int] = {
    UnknownType: 1,
    BooleanType: 10,
    IntegerType: 13,
    LongType: 14,
    DateType: 15,
    TimeType: 16,
    TimestampType: 19,
    TimestampNanoType: 20,
    DecimalType: 21,
    FloatType: 22,
    DoubleType: 23,
    StringType: 25,
    TimestamptzType: 32,
    TimestamptzNanoType: 33,
    UUIDType: 54,
    StructType: 100,
    ListType: 101,
    MapType: 102,
    VariantType: 109,
}
_BLOB_ID = 26
#: (precision, radix, scale) DuckDB gives a numeric column; None for the others
_NUMERIC: dict[type, tuple[int, int, int]] = {
    IntegerType: (32, 2, 0),
    LongType: (64, 2, 0),
    FloatType: (24, 2, 0),
    DoubleType: (53, 2, 0),
}


@dataclass(frozen=True)
class ListedTable:
    """A table as the catalog lists it; ``schema`` and the rest once its metadata is loaded
    (None when the query needs no more than names)."""

    catalog: str
    namespace: str
    name: str
    schema: Schema | None = None
    comment: str | None = None
    estimated_size: int | None = None
    #: each column's ``write-default`` as a SQL literal (None: no default), as DESCRIBE
    #: shows it (:func:`iceduck.sql.describe.default_sql`)
    defaults: tuple[str | None, ...] = ()
    #: whether iceduck writes the table (``is_insertable_into``): not a Paimon table's
    insertable: bool = True
    #: an Iceberg view rather than a table
    is_view: bool = False
    #: a loaded view's ``CREATE VIEW`` statement, as DuckDB prints its own (:func:`view_sql`;
    #: None when the view has no SQL iceduck reads)
    definition: str | None = None

    def default(self, index: int) -> str | None:
        return self.defaults[index] if index < len(self.defaults) else None


def oid(*names: str) -> int:
    """A stable oid for an Iceberg catalog, schema or table, by its names: in ``[2**62,
    2**63)``, above the small counters DuckDB numbers its own objects with."""
    digest = hashlib.blake2b("\x00".join(names).encode(), digest_size=8).digest()
    return 2**62 + int.from_bytes(digest, "big") % 2**62


def type_facts(t: IcebergType) -> tuple[int, tuple[int, int, int] | None]:
    """DuckDB's ``data_type_id`` and (precision, radix, scale) of the type ``t`` is read as."""
    if isinstance(t, DecimalType):
        return _TYPE_IDS[DecimalType], (t.precision, 10, t.scale)
    return _TYPE_IDS.get(type(t), _BLOB_ID), _NUMERIC.get(type(t))


def spelled_types(duck: Duck, tables: Iterable[ListedTable]) -> dict[str, str]:
    """{our DuckDB type name: DuckDB's spelling of it} for every column of ``tables``
    (``DECIMAL(10, 2)`` -> ``DECIMAL(10,2)``, ``TIMESTAMPTZ`` -> ``TIMESTAMP WITH TIME
    ZONE``, struct fields quoted only where DuckDB quotes them): one query for all."""
    names = sorted({duckdb_type(f.field_type) for t in tables if t.schema for f in t.schema.fields})
    if not names:
        return {}
    items = ", ".join(f"typeof(NULL::{name})" for name in names)
    row = queries.rows(duck, f"SELECT [{items}]")[0][0]
    return dict(zip(names, row, strict=True))


def keywords(duck: Duck) -> frozenset[str]:
    """DuckDB's keywords (every category): a column name among them is quoted in a
    table's ``CREATE TABLE`` as DuckDB prints it."""
    return frozenset(
        str(r[0]).lower() for r in queries.rows(duck, "SELECT keyword_name FROM duckdb_keywords()")
    )


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def printed_name(name: str, reserved: frozenset[str]) -> str:
    """An identifier as DuckDB prints it in a definition: bare unless it needs quotes."""
    if _PLAIN.fullmatch(name) and name.lower() not in reserved:
        return name
    return quote_identifier(name)


# -- rows per source, in DuckDB's column names ---------------------------------------------------

Row = dict[str, Any]


def database_rows(name: str, kind: str, path: str | None, readonly: bool) -> list[Row]:
    """The ``duckdb_databases()`` row of a catalog: ``type`` as DuckDB's extensions name an
    attached lake's (``iceberg``), ``path`` its warehouse location."""
    return [
        {
            "database_name": name,
            "database_oid": oid(name),
            "path": path,
            "tags": {},
            "internal": False,
            "type": kind,
            "readonly": readonly,
            "encrypted": False,
            "options": {},
        }
    ]


def schema_rows(kind: str, catalog: str, namespaces: Sequence[str]) -> list[Row]:
    """``information_schema.schemata`` / ``duckdb_schemas()`` rows of a catalog's namespaces
    (DuckDB names every schema's owner ``duckdb``)."""
    if kind == "schemata":
        return [{"catalog_name": catalog, "schema_name": ns, "schema_owner": "duckdb"} for ns in namespaces]
    return [
        {
            "oid": oid(catalog, ns),
            "database_name": catalog,
            "database_oid": oid(catalog),
            "schema_name": ns,
            "tags": {},
            "internal": False,
        }
        for ns in namespaces
    ]


def table_rows(
    kind: str, tables: Sequence[ListedTable], spelled: dict[str, str], reserved: frozenset[str]
) -> list[Row]:
    """``information_schema.tables`` (tables and views) / ``duckdb_tables()`` (tables) rows."""
    if kind == "tables":
        return [
            {
                "table_catalog": t.catalog,
                "table_schema": t.namespace,
                "table_name": t.name,
                "table_type": "VIEW" if t.is_view else "BASE TABLE",
                "is_insertable_into": "YES" if t.insertable and not t.is_view else "NO",
                "is_typed": "NO",
                "table_comment": t.comment,
            }
            for t in tables
        ]
    return [
        {
            **_table_keys(t),
            "comment": t.comment,
            "tags": {},
            "internal": False,
            "temporary": False,
            "has_primary_key": False,  # identifier fields are no constraint DuckDB enforces
            "estimated_size": t.estimated_size,
            "column_count": None if t.schema is None else len(t.schema.fields),
            "index_count": 0,
            "check_constraint_count": 0,
            "sql": None if t.schema is None else create_table(t, spelled, reserved),
        }
        for t in tables
    ]


def view_rows(kind: str, views: Sequence[ListedTable]) -> list[Row]:
    """``information_schema.views`` / ``duckdb_views()`` rows: a view is no updatable or
    insertable one (DuckDB says NO of its own), its definition the ``CREATE VIEW``."""
    if kind == "views":
        return [
            {
                "table_catalog": v.catalog,
                "table_schema": v.namespace,
                "table_name": v.name,
                "view_definition": v.definition,
                "check_option": "NONE",
                **dict.fromkeys(
                    ("is_updatable", "is_insertable_into", "is_trigger_updatable", "is_trigger_deletable"),
                    "NO",
                ),
                "is_trigger_insertable_into": "NO",
            }
            for v in views
        ]
    return [
        {
            **{k.replace("table_", "view_"): value for k, value in _table_keys(v).items()},
            "comment": v.comment,
            "tags": {},
            "internal": False,
            "temporary": False,
            "column_count": None if v.schema is None else len(v.schema.fields),
            "sql": v.definition,
            "is_bound": True,
        }
        for v in views
    ]


def view_sql(duck: Duck, namespace: str, name: str, columns: Sequence[str] | None, query: str) -> str:
    """``CREATE VIEW ns.v (a, b) AS <query>;`` as ``duckdb_views().sql`` prints a view: the
    column list only when the view renames its query's columns (``columns``), the query as
    DuckDB prints it back (:func:`iceduck.engine.queries.printed_query`)."""
    reserved = keywords(duck)
    listed = "" if not columns else " (" + ", ".join(printed_name(c, reserved) for c in columns) + ")"
    head = f"CREATE VIEW {printed_name(namespace, reserved)}.{printed_name(name, reserved)}{listed}"
    return f"{head} AS {queries.printed_query(duck, query)};"


def create_table(t: ListedTable, spelled: dict[str, str], reserved: frozenset[str]) -> str:
    """``CREATE TABLE ns.t(a INTEGER NOT NULL, ...);`` as ``duckdb_tables().sql`` prints a
    table (outside the default database, without the database's name)."""
    assert t.schema is not None
    columns = ", ".join(
        f"{printed_name(f.name, reserved)} {spelled[duckdb_type(f.field_type)]}"
        + (f" DEFAULT({default})" if (default := t.default(i)) is not None else "")
        + (" NOT NULL" if f.required else "")
        for i, f in enumerate(t.schema.fields)
    )
    return f"CREATE TABLE {printed_name(t.namespace, reserved)}.{printed_name(t.name, reserved)}({columns});"


def column_rows(kind: str, tables: Sequence[ListedTable], spelled: dict[str, str]) -> list[Row]:
    """``information_schema.columns`` / ``duckdb_columns()`` / ``pragma_table_info`` rows."""
    rows: list[Row] = []
    for t in tables:
        assert t.schema is not None
        for index, f in enumerate(t.schema.fields):
            data_type = spelled[duckdb_type(f.field_type)]
            type_id, numeric = type_facts(f.field_type)
            precision, radix, scale = numeric if numeric is not None else (None, None, None)
            if kind == "pragma_table_info":
                row: Row = {
                    "dflt_value": t.default(index),
                    "cid": index,
                    "name": f.name,
                    "type": data_type,
                    "notnull": f.required,
                    "pk": False,
                }
            elif kind == "columns":
                row = {
                    "table_catalog": t.catalog,
                    "table_schema": t.namespace,
                    "table_name": t.name,
                    "column_name": f.name,
                    "ordinal_position": index + 1,
                    "column_default": t.default(index),
                    "is_nullable": "NO" if f.required else "YES",
                    "data_type": data_type,
                    "numeric_precision": precision,
                    "numeric_precision_radix": radix,
                    "numeric_scale": scale,
                    "is_generated": "NEVER",
                    "column_comment": f.doc,
                }
            else:
                row = {
                    **_table_keys(t),
                    "column_name": f.name,
                    "column_index": index + 1,
                    "comment": f.doc,
                    "internal": False,
                    "column_default": t.default(index),
                    "is_nullable": not f.required,
                    "data_type": data_type,
                    "data_type_id": type_id,
                    "numeric_precision": precision,
                    "numeric_precision_radix": radix,
                    "numeric_scale": scale,
                    "tags": {},
                    "is_generated": False,
                }
            rows.append(row)
    return rows


def _table_keys(t: ListedTable) -> Row:
    return {
        "database_name": t.catalog,
        "database_oid": oid(t.catalog),
        "schema_name": t.namespace,
        "schema_oid": oid(t.catalog, t.namespace),
        "table_name": t.name,
        "table_oid": oid(t.catalog, t.namespace, t.name),
    }


# -- the relation ----------------------------------------------------------------------------------


def own_columns(duck: Duck, own: str) -> list[tuple[str, str]]:
    """(name, DuckDB type) of DuckDB's own source ``own`` (``information_schema.tables``,
    ``duckdb_columns()``...), as this DuckDB defines it."""
    return [(name, str(kind)) for name, kind in queries.describe(duck, f"SELECT * FROM {own}")]


#: the prefix of the objects iceduck registers on a statement's cursor (scans, Arrow tables,
#: these rows): DuckDB lists them as temporary views, but they are no user's tables
INTERNAL_PREFIX = "__iceduck_"
#: a source whose columns :func:`attach_rows` takes when DuckDB's own cannot be bound
#: (``pragma_table_info`` of a name DuckDB does not have)
TABLE_INFO_COLUMNS = "pragma_table_info('information_schema.schemata')"


def attach_rows(duck: Duck, own: str, rows: Sequence[Row], name: str, with_own: bool = True) -> str:
    """Register ``rows`` (values by column name, case-insensitively; a missing one is NULL)
    on ``duck`` as ``name``, in the columns and types of DuckDB's ``own`` source, and return
    the relation: ``own``'s rows (but iceduck's registered objects) followed by these; only
    these when not ``with_own`` (in the columns of :data:`TABLE_INFO_COLUMNS`)."""
    columns = own_columns(duck, own if with_own else TABLE_INFO_COLUMNS)
    table = _arrow(columns, [{k.lower(): v for k, v in row.items()} for row in rows])
    queries.register_arrow(duck, name, table)
    ours = f"SELECT * FROM {quote_identifier(name)}"
    if not with_own:
        return f"({ours})"
    hidden = ""
    named = [column for column, _ in columns if column in ("table_name", "view_name")]
    if named:
        hidden = f" WHERE NOT starts_with({named[0]}, '{INTERNAL_PREFIX}')"
    return f"(SELECT * FROM {own}{hidden} UNION ALL {ours})"


def _arrow(columns: Sequence[tuple[str, str]], rows: Sequence[Row]) -> pa.Table:
    import pyarrow as pa  # the first listing loads pyarrow, as a metadata table does

    types: dict[str, Callable[[], pa.DataType]] = {
        "VARCHAR": pa.string,
        "BIGINT": pa.int64,
        "INTEGER": pa.int32,
        "BOOLEAN": pa.bool_,
        '"NULL"': pa.null,
        "MAP(VARCHAR, VARCHAR)": lambda: pa.map_(pa.string(), pa.string()),
        "VARCHAR[]": lambda: pa.list_(pa.string()),
    }
    arrays = []
    for column, kind in columns:
        make = types.get(kind)
        if make is None:
            raise UnsupportedError(f"internal: no Arrow type for DuckDB's {kind} column {column}")
        values = [row.get(column.lower()) for row in rows]
        if kind.startswith("MAP"):
            values = [list(v.items()) if isinstance(v, dict) else v for v in values]
        arrays.append(pa.array(values, type=make()))
    return pa.Table.from_arrays(arrays, names=[c for c, _ in columns])

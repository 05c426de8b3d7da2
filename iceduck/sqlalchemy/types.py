"""Column types as SQLAlchemy sees them: the DuckDB type an Iceberg column is read as (the
spelling ``DESCRIBE`` and ``cursor.description`` give, :mod:`iceduck.engine.types`) mapped to
a SQLAlchemy type.

The Iceberg primitive types map one to one (spec, "Primitive Types"): boolean, int, long,
float, double, decimal(P,S), date, time, timestamp, timestamptz, string, uuid, fixed(L),
binary. Lists become :class:`~sqlalchemy.types.ARRAY` of their element; structs and maps have
no SQLAlchemy counterpart and reflect as :class:`~sqlalchemy.types.NullType`, whose values
pass through unchanged (dicts), which is what a pandas reader wants.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import types as sqltypes
from sqlalchemy.dialects.postgresql.base import PGTypeCompiler

#: SQLAlchemy 2's names; 1.4 (which Superset 6.1 pins) has neither, and its Float and String
#: are what those columns read as there
_DOUBLE: type[sqltypes.TypeEngine[Any]] = getattr(sqltypes, "Double", sqltypes.Float)
_UUID: type[sqltypes.TypeEngine[Any]] = getattr(sqltypes, "Uuid", sqltypes.String)

_SIMPLE: dict[str, type[sqltypes.TypeEngine[Any]]] = {
    "BOOLEAN": sqltypes.Boolean,
    "TINYINT": sqltypes.SmallInteger,
    "SMALLINT": sqltypes.SmallInteger,
    "INTEGER": sqltypes.Integer,
    "BIGINT": sqltypes.BigInteger,
    "HUGEINT": sqltypes.Numeric,
    "FLOAT": sqltypes.Float,
    "REAL": sqltypes.Float,
    "DOUBLE": _DOUBLE,
    "DATE": sqltypes.Date,
    "TIME": sqltypes.Time,
    "VARCHAR": sqltypes.String,
    "BLOB": sqltypes.LargeBinary,
    "UUID": _UUID,
    "INTERVAL": sqltypes.Interval,
}
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


def sqlalchemy_type(duckdb_type: str) -> sqltypes.TypeEngine:
    """The SQLAlchemy type of a column DuckDB reads as ``duckdb_type``."""
    text = duckdb_type.strip().upper()
    if text.endswith("[]"):
        return sqltypes.ARRAY(sqlalchemy_type(text[:-2]))
    if text in _SIMPLE:
        return _SIMPLE[text]()
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        return sqltypes.Numeric(int(decimal[1]), int(decimal[2]))
    if text.startswith("TIMESTAMP"):
        # TIMESTAMP, TIMESTAMP_NS (timestamp_ns) and their WITH TIME ZONE forms (timestamptz)
        return sqltypes.DateTime(timezone=text.endswith("WITH TIME ZONE"))
    return sqltypes.NullType()


class IceduckTypeCompiler(PGTypeCompiler):
    """PostgreSQL's type names, where iceduck's DDL spells them otherwise: ``FLOAT`` is
    Iceberg's 32-bit float in iceduck (as in Spark), while SQLAlchemy's :class:`Float` (what
    pandas gives a float64 column, as ``FLOAT(53)``) means PostgreSQL's 64-bit one; and
    ``TIME`` has no time zone to say it lacks (Iceberg's ``time`` is a local time)."""

    def visit_FLOAT(self, type_: sqltypes.Float[Any], **kw: Any) -> str:
        return "REAL" if type_.precision is not None and type_.precision <= 24 else "DOUBLE"

    def visit_float(self, type_: sqltypes.Float[Any], **kw: Any) -> str:
        return self.visit_FLOAT(type_, **kw)

    def visit_TIME(self, type_: sqltypes.Time, **kw: Any) -> str:
        if getattr(type_, "timezone", False):
            return "TIME WITH TIME ZONE"  # iceduck names it unsupported: Iceberg has no such type
        return "TIME"

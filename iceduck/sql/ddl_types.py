"""Column type names of CREATE TABLE / ADD COLUMN / ALTER COLUMN TYPE -> Iceberg types.

Both spellings users paste are accepted:

* Spark (and Iceberg's own names): ``int``, ``bigint``/``long``, ``string``, ``binary``,
  ``decimal(p,s)``, ``timestamp``, ``timestamp_ntz``, ``date``, ``boolean``, ``float``,
  ``double``, ``tinyint``/``smallint`` (-> int, as Iceberg's Spark integration stores
  them), ``char(n)``/``varchar(n)`` (-> string), ``struct<a: int NOT NULL COMMENT 'c'>``,
  ``array<int>`` (also ``list<int>``), ``map<string, int>``, ``uuid``, ``time``,
  ``timestamptz``, ``timestamp_ns``, ``timestamptz_ns``, ``fixed(n)``/``fixed[n]``,
  ``variant``;
* DuckDB: ``INTEGER``, ``BIGINT``, ``VARCHAR``, ``BLOB``, ``TIMESTAMPTZ``,
  ``TIMESTAMP WITH TIME ZONE``, ``TIMESTAMP_NS``, ``UUID``, ``STRUCT(a INT)``, ``INT[]``,
  ``MAP(VARCHAR, INT)``, ``DECIMAL(p,s)``, ``TIME``, ``UTINYINT``/``USMALLINT`` (-> int),
  ``UINTEGER`` (-> long), ...

**Which** ``timestamp``: in Spark SQL ``TIMESTAMP`` is an instant (Iceberg
``timestamptz``; ``TIMESTAMP_NTZ`` is the one without zone), in DuckDB it is a local
date-time (Iceberg ``timestamp``). A statement is *Spark-flavoured* -- and then a bare
``timestamp`` means ``timestamptz`` -- when it has any of: ``USING <provider>``,
``TBLPROPERTIES``, ``PARTITIONED BY``, backquoted names, angle-bracket types
(``struct<...>``, ``array<...>``, ``map<...>``) or Spark's ``ADD COLUMNS``. Otherwise
DuckDB's meaning applies. ``DECIMAL`` without precision follows the same rule
(Spark: ``decimal(10,0)``, DuckDB: ``DECIMAL(18,3)``).

Nested field ids are placeholders numbered in parse order (see
:mod:`iceduck.sql.statements`); element/key/value fields are optional unless declared
otherwise, map keys always required (spec).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot.tokens import TokenType

from iceduck.errors import UnsupportedError, UserError, ValidationError
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
from iceduck.sql.ddl_tokens import Cursor

_SIMPLE: dict[str, IcebergType] = {
    **dict.fromkeys(["BOOLEAN", "BOOL", "LOGICAL"], BooleanType()),
    **dict.fromkeys(
        ["TINYINT", "BYTE", "INT1", "SMALLINT", "SHORT", "INT2", "INT", "INTEGER", "INT4", "SIGNED"],
        IntegerType(),
    ),
    **dict.fromkeys(["UTINYINT", "USMALLINT"], IntegerType()),
    **dict.fromkeys(["BIGINT", "LONG", "INT8", "UINTEGER"], LongType()),
    **dict.fromkeys(["FLOAT", "REAL", "FLOAT4"], FloatType()),
    **dict.fromkeys(["DOUBLE", "FLOAT8", "DOUBLE PRECISION"], DoubleType()),
    **dict.fromkeys(
        [
            "STRING",
            "VARCHAR",
            "TEXT",
            "CHAR",
            "CHARACTER",
            "BPCHAR",
            "NVARCHAR",
            "NCHAR",
            "CHAR VARYING",
            "CHARACTER VARYING",
        ],
        StringType(),
    ),
    **dict.fromkeys(["BINARY", "BLOB", "BYTEA", "VARBINARY"], BinaryType()),
    "DATE": DateType(),
    "TIME": TimeType(),
    **dict.fromkeys(
        ["TIMESTAMP_NTZ", "DATETIME", "TIMESTAMP_US", "TIMESTAMP_MS", "TIMESTAMP_S"], TimestampType()
    ),
    **dict.fromkeys(["TIMESTAMPTZ", "TIMESTAMP_LTZ"], TimestamptzType()),
    "TIMESTAMP_NS": TimestampNanoType(),
    "TIMESTAMPTZ_NS": TimestamptzNanoType(),
    "UUID": UUIDType(),
    "VARIANT": VariantType(),
}
#: types whose optional ``(n)`` length is ignored (Spark stores char/varchar as string)
_LENGTH_IGNORED = frozenset(
    {
        "STRING",
        "VARCHAR",
        "TEXT",
        "CHAR",
        "CHARACTER",
        "BPCHAR",
        "NVARCHAR",
        "NCHAR",
        "CHAR VARYING",
        "CHARACTER VARYING",
    }
)
_DECIMAL = frozenset({"DECIMAL", "DEC", "NUMERIC"})
_NO_ICEBERG_TYPE = frozenset(
    {
        "HUGEINT",
        "UHUGEINT",
        "UBIGINT",
        "INT128",
        "INTERVAL",
        "JSON",
        "BIT",
        "BITSTRING",
        "ENUM",
        "UNION",
        "VARINT",
    }
)


def parse_type(c: Cursor) -> IcebergType:
    """The type at the cursor, with any DuckDB ``[]`` list suffixes."""
    result = _base_type(c)
    while c.accept_type(TokenType.L_BRACKET):
        if c.at_type(TokenType.NUMBER):
            c.next()  # DuckDB's fixed-size ARRAY: stored as a list
        c.expect_type(TokenType.R_BRACKET, "] of a list type")
        result = ListType(c.new_id(), result)
    return result


def _base_type(c: Cursor) -> IcebergType:
    token = c.peek()
    quoted = token is not None and token.token_type in (TokenType.STRING, TokenType.IDENTIFIER)
    if token is None or quoted or not token.text.replace(" ", "_").isidentifier():
        raise c.error("a column type (bigint, string, decimal(10, 2), timestamp, ...)")
    name = c.word()
    c.next()
    nested = _NESTED.get(name)
    if nested is not None:
        return nested(c)
    if name == "TIMESTAMP":
        return _timestamp(c)
    if name in _DECIMAL:
        return _decimal(c)
    if name == "FIXED":
        return FixedType(_fixed_length(c))
    if name in _SIMPLE:
        if name in _LENGTH_IGNORED and c.at_type(TokenType.L_PAREN):
            c.next()
            c.integer("a length")
            c.expect_type(TokenType.R_PAREN, ")")
        return _SIMPLE[name]
    if name in _NO_ICEBERG_TYPE:
        raise UnsupportedError(f"type {token.text} has no Iceberg equivalent")
    raise UserError(
        f"unknown type {token.text!r}: Iceberg's types are boolean, int, bigint, float, double, "
        "decimal(p, s), date, time, timestamp, timestamptz, string, uuid, binary, fixed(n), "
        "struct<...>, array<...> and map<...>"
    )


def _timestamp(c: Cursor) -> IcebergType:
    if c.accept("WITH", "TIME", "ZONE"):
        return TimestamptzType()
    if c.accept("WITHOUT", "TIME", "ZONE"):
        return TimestampType()
    return TimestamptzType() if c.spark else TimestampType()


def _decimal(c: Cursor) -> DecimalType:
    if not c.accept_type(TokenType.L_PAREN):
        return DecimalType(10, 0) if c.spark else DecimalType(18, 3)
    precision = c.integer("a decimal precision")
    scale = c.integer("a decimal scale") if c.accept_type(TokenType.COMMA) else 0
    c.expect_type(TokenType.R_PAREN, ") after the decimal precision and scale")
    if not 1 <= precision <= 38 or not 0 <= scale <= precision:
        raise ValidationError(
            f"invalid decimal({precision}, {scale}): need 1 <= precision <= 38, scale <= precision"
        )
    return DecimalType(precision, scale)


def _fixed_length(c: Cursor) -> int:
    close = TokenType.R_BRACKET if c.accept_type(TokenType.L_BRACKET) else None
    if close is None:
        c.expect_type(TokenType.L_PAREN, "( after fixed")
        close = TokenType.R_PAREN
    length = c.integer("the length of fixed")
    c.expect_type(close, "the end of fixed(length)")
    if length <= 0:
        raise ValidationError(f"fixed length must be positive, got {length}")
    return length


# -- nested types ---------------------------------------------------------------------------


def _close_angle(c: Cursor) -> None:
    """Consume the ``>`` of ``array<...>`` (DuckDB's tokenizer never fuses ``>>``)."""
    c.expect_type(TokenType.GT, "> closing the type")


def _list(c: Cursor) -> ListType:
    element_id = c.new_id()
    if c.accept_type(TokenType.LT):
        element = parse_type(c)
        _close_angle(c)
    else:  # DuckDB LIST(T)
        c.expect_type(TokenType.L_PAREN, "< or ( after array")
        element = parse_type(c)
        c.expect_type(TokenType.R_PAREN, ") closing the list type")
    return ListType(element_id, element)


def _map(c: Cursor) -> MapType:
    key_id, value_id = c.new_id(), c.new_id()
    angle = c.accept_type(TokenType.LT)
    if not angle:
        c.expect_type(TokenType.L_PAREN, "< or ( after map")
    key = parse_type(c)
    c.expect_type(TokenType.COMMA, ", between the map key and value types")
    value = parse_type(c)
    if angle:
        _close_angle(c)
    else:
        c.expect_type(TokenType.R_PAREN, ") closing the map type")
    return MapType(key_id, key, value_id, value)


def _struct(c: Cursor) -> StructType:
    angle = c.accept_type(TokenType.LT)
    if not angle:
        c.expect_type(TokenType.L_PAREN, "< or ( after struct")
    fields: list[NestedField] = []
    closing = TokenType.GT if angle else TokenType.R_PAREN
    while not c.at_type(closing):
        if fields:
            c.expect_type(TokenType.COMMA, ", between struct fields")
        field_id = c.new_id()
        name = c.identifier("a struct field name")
        c.accept_type(TokenType.COLON)
        field_type = parse_type(c)
        required = c.accept("NOT", "NULL")
        c.accept("NULL")
        doc = c.string("the comment") if c.accept("COMMENT") else None
        fields.append(NestedField(field_id, name, field_type, required, doc))
    if angle:
        _close_angle(c)
    else:
        c.next()
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise UserError(f"duplicate field name in struct: {', '.join(names)}")
    return StructType(tuple(fields))


_NESTED: dict[str, Callable[[Cursor], IcebergType]] = {
    "ARRAY": _list,
    "LIST": _list,
    "MAP": _map,
    "STRUCT": _struct,
    "ROW": _struct,
}

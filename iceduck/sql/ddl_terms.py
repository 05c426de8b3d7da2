"""Small grammar pieces shared by CREATE TABLE and ALTER TABLE: transform terms, sort
terms, property lists, column definitions, DEFAULT literals and retention durations.

Transform terms follow Iceberg's Spark integration (docs, "Spark DDL": ``PARTITIONED BY
(bucket(16, id), days(ts), category)``; ``ADD PARTITION FIELD bucket(16, id) AS shard``):

=========================================  ===================
term                                       Iceberg transform
=========================================  ===================
``col`` / ``identity(col)``                ``identity``
``bucket(N, col)``                         ``bucket[N]``
``truncate(W, col)``                       ``truncate[W]``
``years(ts)``, ``year(ts)``                ``year``
``months(ts)``, ``month(ts)``              ``month``
``days(ts)``, ``day(ts)``, ``date(ts)``    ``day``
``hours(ts)``, ``hour(ts)``, ``date_hour``  ``hour``
=========================================  ===================

``bucket``/``truncate`` also accept the column first (``truncate(s, 4)``), as Spark's
``Expressions.truncate`` spelling in some pipelines does.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

import sqlglot
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from iceduck.errors import IceduckError, UnsupportedError, UserError, ValidationError
from iceduck.spec.datetimes import iso_time_to_micros
from iceduck.spec.sort import NullOrder, SortDirection
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
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    StructType,
    TimeType,
)
from iceduck.spec.values import to_json
from iceduck.sql.ddl_tokens import Cursor
from iceduck.sql.ddl_types import parse_type
from iceduck.sql.literals import Kind, SqlLiteral, iceberg_value, literal_of
from iceduck.sql.parse import DIALECT
from iceduck.sql.statements import ColumnDef, ColumnPath, ColumnPosition, PartitionTerm, Position, SortTerm

_ONE_ARGUMENT: dict[str, Transform] = {
    **dict.fromkeys(["YEARS", "YEAR"], YearTransform()),
    **dict.fromkeys(["MONTHS", "MONTH"], MonthTransform()),
    **dict.fromkeys(["DAYS", "DAY", "DATE"], DayTransform()),
    **dict.fromkeys(["HOURS", "HOUR", "DATE_HOUR"], HourTransform()),
    "IDENTITY": IdentityTransform(),
}
_WITH_PARAMETER = {"BUCKET": BucketTransform, "TRUNCATE": TruncateTransform}

MILLIS = {"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000}
MILLIS.update({"DAY": MILLIS["DAYS"], "HOUR": MILLIS["HOURS"], "MINUTE": MILLIS["MINUTES"]})

#: Iceberg's widest decimal ("decimal(P,S)": P up to 38): a value needing more digits cannot fit
_DECIMAL_DIGITS = 38


# -- transform and sort terms ----------------------------------------------------------------


def column_path(c: Cursor, what: str = "a column name") -> ColumnPath:
    return c.name(what)


def transform_term(c: Cursor) -> tuple[Transform, ColumnPath]:
    """``col``, ``days(ts)``, ``bucket(16, id)``... (see the module docstring)."""
    function = c.word()
    if c.at_type(TokenType.L_PAREN, 1) and (function in _ONE_ARGUMENT or function in _WITH_PARAMETER):
        c.next()
        c.next()
        arguments: list[int | ColumnPath] = []
        while True:
            arguments.append(c.integer() if c.at_type(TokenType.NUMBER) else column_path(c))
            if not c.accept_type(TokenType.COMMA):
                break
        c.expect_type(TokenType.R_PAREN, f") closing {function.lower()}(...)")
        return _transform(function, arguments)
    name = c.peek()
    if name is not None and c.at_type(TokenType.L_PAREN, 1):
        raise UserError(
            f"unknown partition transform {name.text!r} (use bucket, truncate, years, months, "
            "days, hours or a column)"
        )
    return IdentityTransform(), column_path(c)


def _transform(function: str, arguments: list[int | ColumnPath]) -> tuple[Transform, ColumnPath]:
    name = function.lower()
    if function in _ONE_ARGUMENT:
        if len(arguments) != 1 or not isinstance(arguments[0], tuple):
            raise UserError(f"{name} takes one argument, a column: {name}(col)")
        return _ONE_ARGUMENT[function], arguments[0]
    numbers = [a for a in arguments if isinstance(a, int)]
    columns = [a for a in arguments if isinstance(a, tuple)]
    if len(arguments) != 2 or len(numbers) != 1 or len(columns) != 1:
        raise UserError(f"{name} takes two arguments, a number and a column: {name}(N, col)")
    if numbers[0] <= 0:
        raise ValidationError(f"{name} needs a positive number, got {numbers[0]}")
    return _WITH_PARAMETER[function](numbers[0]), columns[0]


def partition_term(c: Cursor) -> PartitionTerm:
    transform, source = transform_term(c)
    name = c.identifier("the partition field name") if c.accept("AS") else None
    return PartitionTerm(transform, source, name)


def partition_terms(c: Cursor) -> tuple[PartitionTerm, ...]:
    """``( term [AS name], ... )``."""
    c.expect_type(TokenType.L_PAREN, "( after PARTITIONED BY")
    terms = [partition_term(c)]
    while c.accept_type(TokenType.COMMA):
        terms.append(partition_term(c))
    if not c.at_type(TokenType.R_PAREN):
        raise c.error(
            "a column or a transform such as days(ts) in PARTITIONED BY "
            "(Hive-style partition columns with types are not supported)"
        )
    c.next()
    return tuple(terms)


def sort_term(c: Cursor) -> SortTerm:
    """``term [ASC|DESC] [NULLS FIRST|LAST]``; Spark's defaults: ASC nulls first, DESC nulls last."""
    transform, source = transform_term(c)
    direction = SortDirection.DESC if c.accept("DESC") else SortDirection.ASC
    if direction is SortDirection.ASC:
        c.accept("ASC")
    null_order = NullOrder.NULLS_FIRST if direction is SortDirection.ASC else NullOrder.NULLS_LAST
    if c.accept("NULLS", "FIRST"):
        null_order = NullOrder.NULLS_FIRST
    elif c.accept("NULLS", "LAST"):
        null_order = NullOrder.NULLS_LAST
    return SortTerm(transform, source, direction, null_order)


def sort_terms(c: Cursor) -> tuple[SortTerm, ...]:
    parenthesised = c.accept_type(TokenType.L_PAREN)
    terms = [sort_term(c)]
    while c.accept_type(TokenType.COMMA):
        terms.append(sort_term(c))
    if parenthesised:
        c.expect_type(TokenType.R_PAREN, ") after the sort terms")
    return tuple(terms)


# -- properties --------------------------------------------------------------------------------


def properties(c: Cursor) -> dict[str, str]:
    """``('k' = 'v', k.x = 1, "k" "v", ...)``: Spark property lists (the ``=`` is optional)."""
    c.expect_type(TokenType.L_PAREN, "( before the properties")
    result: dict[str, str] = {}
    while not c.accept_type(TokenType.R_PAREN):
        if result:
            c.expect_type(TokenType.COMMA, ", between properties")
        key = property_key(c)
        c.accept_type(TokenType.EQ)
        result[key] = _property_value(c)
    return result


def property_keys(c: Cursor) -> tuple[str, ...]:
    c.expect_type(TokenType.L_PAREN, "( before the property names")
    keys = [property_key(c)]
    while c.accept_type(TokenType.COMMA):
        keys.append(property_key(c))
    c.expect_type(TokenType.R_PAREN, ") after the property names")
    return tuple(keys)


def property_key(c: Cursor) -> str:
    """A quoted key, or unquoted text such as ``write.format.default`` / ``format-version``."""
    token = c.peek()
    if token is not None and token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
        return c.string()
    start = c.i
    while (
        not c.done()
        and not c.at_type(TokenType.EQ)
        and not c.at_type(TokenType.COMMA)
        and not c.at_type(TokenType.R_PAREN)
        and not c.at_type(TokenType.STRING)
    ):
        c.next()
    if c.i == start:
        raise c.error("a property name")
    return "".join(c.tokens[j].text for j in range(start, c.i))


def _property_value(c: Cursor) -> str:
    token = c.peek()
    if token is None:
        raise c.error("a property value")
    if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
        return c.string()
    if c.word() in ("TRUE", "FALSE"):
        c.next()
        return token.text.lower()
    if token.token_type in (TokenType.NUMBER, TokenType.DASH):
        start = c.i
        c.accept_type(TokenType.DASH)
        c.expect_type(TokenType.NUMBER, "a number")
        return c.span(start, c.i).replace(" ", "")
    return c.identifier("a property value")


# -- columns -----------------------------------------------------------------------------------


def column_def(c: Cursor, name: str) -> ColumnDef:
    """``<type> [NOT NULL | NULL] [DEFAULT literal] [COMMENT 'c']`` in any order."""
    column_type = parse_type(c)
    required, comment, default, has_default = False, None, None, False
    while True:
        if c.accept("NOT", "NULL"):
            required = True
        elif c.accept("NULL"):
            required = False
        elif c.accept("COMMENT"):
            comment = c.string("the column comment")
        elif c.accept("DEFAULT"):
            default, has_default = default_value(c, name, column_type), True
        elif c.word() in ("PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "CONSTRAINT", "COLLATE"):
            raise UnsupportedError(f"column constraint {c.word()} is not supported (column {name})")
        elif c.at("GENERATED") or c.at("AS"):
            raise UnsupportedError(f"generated columns are not supported (column {name})")
        else:
            return ColumnDef(name, column_type, required, comment, default, has_default)


def position(c: Cursor) -> ColumnPosition | None:
    if c.accept("FIRST"):
        return ColumnPosition(Position.FIRST)
    if c.accept("AFTER"):
        return ColumnPosition(Position.AFTER, c.identifier("the column to place it after"))
    return None


def default_value(c: Cursor, column: str, t: IcebergType) -> Any:
    """The Python value (of :mod:`iceduck.spec.types`) of a ``DEFAULT <literal>``."""
    return typed_default(default_literal(c, column), column, t)


def default_literal(c: Cursor, column: str) -> SqlLiteral:
    """The literal of ``DEFAULT <literal>`` / ``SET DEFAULT <literal>``, as DuckDB types it."""
    if c.accept("NULL"):
        return SqlLiteral(Kind.NULL, None)
    text = c.expression(
        "a DEFAULT value", frozenset({"NOT", "NULL", "COMMENT", "FIRST", "AFTER"}), comma=True
    )
    try:
        node = sqlglot.parse_one(text, dialect=DIALECT)
    except ParseError as e:
        raise UserError(f"cannot read DEFAULT {text} of column {column}") from e
    literal = literal_of(node)
    if literal is None or literal.kind is Kind.OTHER:
        raise UnsupportedError(f"DEFAULT of column {column} must be a literal, got {text}")
    return literal


def typed_default(literal: SqlLiteral, column: str, t: IcebergType) -> Any:
    """``literal`` as a value of column type ``t`` (None for NULL); UserError when it does not fit.

    Timestamps with zone written without an offset are read as UTC (a default is stored
    once; it must not depend on the session's time zone).
    """
    if literal.kind is Kind.NULL:
        return None
    value = _typed_value(literal, t)
    shown = literal.value if literal.kind is not Kind.STRING else repr(literal.value)
    if value is None:
        raise UserError(f"DEFAULT {shown} does not fit column {column} of type {t}")
    try:
        to_json(t, value)  # range, precision, width
    except IceduckError as e:
        raise UserError(f"DEFAULT {shown} does not fit column {column} of type {t}: {e}") from e
    return value


def _typed_value(literal: SqlLiteral, t: IcebergType) -> Any:
    kind, value = literal.kind, literal.value
    if isinstance(t, FloatType | DoubleType):
        return float(value) if kind in (Kind.INTEGER, Kind.DECIMAL, Kind.DOUBLE) else None
    if isinstance(t, TimeType):
        try:
            return iso_time_to_micros(value) if kind is Kind.STRING else None
        except IceduckError:
            return None
    if isinstance(t, DecimalType):
        if kind not in (Kind.INTEGER, Kind.DECIMAL):
            return None
        try:
            with localcontext(prec=_DECIMAL_DIGITS):  # the default context rounds at 28 digits
                return Decimal(value).quantize(Decimal(1).scaleb(-t.scale))
        except InvalidOperation:
            return None
    if isinstance(t, StructType):
        return None
    return iceberg_value(literal, t, "UTC")


def duration_ms(c: Cursor, what: str) -> int:
    """``n DAYS|HOURS|MINUTES`` in milliseconds."""
    amount = c.integer(f"the {what}")
    unit = c.word()
    if unit not in MILLIS:
        raise c.error(f"DAYS, HOURS or MINUTES after the {what}")
    c.next()
    if amount < 0:
        raise UserError(f"the {what} must not be negative")
    return amount * MILLIS[unit]

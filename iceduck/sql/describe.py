"""``DESCRIBE ns.t``: a table's columns as its Iceberg schema declares them.

DuckDB would describe the scan iceduck reads a table through, a ``read_parquet`` view that
knows nothing of the schema: every column nullable, no default, no comment. The rows here
come from the schema the statement reads (the snapshot's, under time travel or a
``branch_``/``tag_`` suffix) instead, with DuckDB's column names plus Spark's ``comment``:

=============  ==================================================================
column_name    the field's name
column_type    the type DuckDB reads the column as (what ``SELECT`` returns)
null           ``NO`` for a required field, else ``YES``
key            NULL (Iceberg has no keys; identifier fields are not constraints)
default        the field's ``write-default`` as a SQL literal (``0.0``, ``'x'``,
               ``DATE '2024-01-01'``), the value an INSERT gives an omitted column
extra          ``ndv=<n>``: the column's number of distinct values in the statistics file
               of the snapshot read (``compute_table_stats``), else NULL
comment        the field's ``doc``
=============  ==================================================================

Literals are written as a user would type them in ``DEFAULT`` (:func:`default_sql`), not
as DuckDB prints a parsed expression (``CAST('2024-01-01' AS DATE)``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from iceduck.errors import CorruptDataError
from iceduck.spec.column_names import unique_names
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
)
from iceduck.spec.values import to_json
from iceduck.sql.parse import Statement, parse_statement, tokenize

#: the columns of a table's DESCRIBE: DuckDB's, then Spark's ``comment``
COLUMNS = ("column_name", "column_type", "null", "key", "default", "extra", "comment")

#: a date-time's seconds fraction, whose trailing zeros a literal leaves out
_FRACTION = re.compile(r"(?P<head>[^.]*)\.(?P<fraction>\d+)(?P<tail>.*)")

#: the typed-literal keyword of each date/time type (DuckDB's type names)
_TYPED: dict[type, str] = {
    DateType: "DATE",
    TimeType: "TIME",
    TimestampType: "TIMESTAMP",
    TimestamptzType: "TIMESTAMPTZ",
    TimestampNanoType: "TIMESTAMP_NS",
}
#: date/time types without a typed-literal keyword both DuckDB and sqlglot read (DuckDB reads
#: ``TIMESTAMPTZ_NS '...'``, sqlglot does not): written as a cast, ``CAST('...' AS T)``
_CAST: dict[type, str] = {TimestamptzNanoType: "TIMESTAMPTZ_NS"}


def described_table(statement: Statement) -> exp.Table | None:
    """The table ``DESCRIBE [TABLE] name`` names (also ``DESCRIBE iceduck_scan('path')``);
    None for DESCRIBE of a query, which DuckDB describes."""
    if statement.kind != "DESCRIBE" or statement.explain:
        return None
    subject = statement.tree.this
    if isinstance(subject, exp.Schema):  # a table function: DESCRIBE iceduck_scan('path')
        subject = subject.this
    return subject if isinstance(subject, exp.Table) else None


def parse_describe(text: str) -> Statement:
    """A DESCRIBE statement, parsed. What it describes is a table (:func:`described_table`)
    when it names one: ``DESCRIBE [TABLE] name``, ``DESCRIBE FROM name`` (DuckDB's form),
    also with a time-travel clause (``DESCRIBE ns.t VERSION AS OF 123``: the table's
    schema as of then) or as a table function (``DESCRIBE iceduck_scan('path')``).

    sqlglot reads time travel and table functions only in a FROM, so such a name is read
    as ``DESCRIBE FROM name ...`` and the table put back as what is described.
    """
    statement = parse_statement(_with_from(text))
    subject = statement.tree.this
    words = [t.text.upper() for t in statement.tokens[:2]]
    if words[1:] == ["FROM"] and isinstance(subject, exp.Select):
        source = subject.args.get("from_") or subject.args.get("from")
        others = [k for k, v in subject.args.items() if v and k not in ("expressions", "from_", "from")]
        if isinstance(source, exp.From) and _bare_table(source.this) and not others:
            statement.tree.set("this", source.this)
    return statement


def _bare_table(node: exp.Expression) -> bool:
    """Whether ``node`` is one table (named, or a table function), joined to nothing."""
    if not isinstance(node, exp.Table):
        return False
    return not [
        k for k, v in node.args.items() if v and k not in ("this", "db", "catalog", "alias", "version")
    ]


def _with_from(text: str) -> str:
    """``DESCRIBE [TABLE] name <time travel>`` and ``DESCRIBE [TABLE] name(args)`` with
    ``FROM`` before the name; any other text as it is."""
    tokens = tokenize(text)
    words = [t.text.upper() for t in tokens]
    if not words or words[0] not in ("DESCRIBE", "DESC"):
        return text
    start = 2 if words[1:2] == ["TABLE"] else 1
    end = start + 1  # the name: parts separated by dots
    while end + 1 < len(tokens) and tokens[end].token_type is TokenType.DOT:
        end += 2
    clause = words[end + 1 : end + 4] if words[end : end + 1] == ["FOR"] else words[end : end + 3]
    travel = clause[:1] in (["VERSION"], ["TIMESTAMP"], ["SYSTEM_TIME"], ["SYSTEM_VERSION"])
    called = end < len(tokens) and tokens[end].token_type is TokenType.L_PAREN
    if not called and not (travel and clause[1:3] == ["AS", "OF"]):
        return text
    if start == 2:  # DESCRIBE TABLE name -> DESCRIBE FROM name
        return text[: tokens[1].start] + "FROM" + text[tokens[1].end + 1 :]
    return text[: tokens[0].end + 1] + " FROM" + text[tokens[0].end + 1 :]


def describe_columns(
    fields: Sequence[NestedField], types: Sequence[str], ndv: Mapping[int, int] | None = None
) -> dict[str, list[str | None]]:
    """The rows of DESCRIBE (by column, as :data:`COLUMNS` names them) of a table's
    top-level ``fields``; ``types`` are the DuckDB type names the scan gives them, in order;
    ``ndv`` the distinct counts by field id of the snapshot's statistics file."""
    names = unique_names([f.name for f in fields])  # as the scan names them (SELECT *)
    columns = plain_columns(names, types, [f.required for f in fields])
    counts = ndv or {}
    columns["extra"] = [f"ndv={counts[f.field_id]}" if f.field_id in counts else None for f in fields]
    columns["default"] = [default_sql(f.field_type, f.write_default) for f in fields]
    columns["comment"] = [f.doc for f in fields]
    return columns


def plain_columns(
    names: Sequence[str], types: Sequence[str], required: Sequence[bool]
) -> dict[str, list[str | None]]:
    """The rows of DESCRIBE of columns without defaults or comments (a metadata table's,
    whose required columns are Spark's ``nullable = false``)."""
    if not len(names) == len(types) == len(required):
        raise CorruptDataError(
            f"the scan read {len(types)} columns of a relation with {len(names)}: cannot describe it"
        )
    none: list[str | None] = [None] * len(names)
    return {
        "column_name": list(names),
        "column_type": list(types),
        "null": ["NO" if r else "YES" for r in required],
        "key": none,
        "default": none,
        "extra": none,
        "comment": none,
    }


def default_sql(t: IcebergType, value: Any) -> str | None:
    """``value`` (of :mod:`iceduck.spec.types`' representation) as a SQL literal of type
    ``t``, as it would be written after ``DEFAULT``; None for no default."""
    if value is None:
        return None
    if isinstance(t, StructType):
        ids = [f.field_id for f in t.fields]
        by_id = value if isinstance(value, Mapping) else dict(zip(ids, value, strict=True))
        items = [f"{_quote(f.name)}: {_item(f.field_type, by_id.get(f.field_id))}" for f in t.fields]
        return "{" + ", ".join(items) + "}"
    if isinstance(t, ListType):
        return "[" + ", ".join(_item(t.element_type, v) for v in value) + "]"
    if isinstance(t, MapType):
        pairs = [f"{_item(t.key_type, k)}: {_item(t.value_type, v)}" for k, v in value.items()]
        return "MAP {" + ", ".join(pairs) + "}"
    text = to_json(t, value)  # validates the value against its type
    if isinstance(t, BooleanType):
        return "true" if value else "false"
    if isinstance(t, IntegerType | LongType | DecimalType):
        return str(text)
    if isinstance(t, FloatType | DoubleType):
        return repr(float(text))  # to_json rounds a float to the shortest float32 text (0.1)
    if isinstance(t, StringType):
        return _quote(str(value))
    if isinstance(t, UUIDType):
        return f"UUID {_quote(str(text))}"
    if isinstance(t, FixedType | BinaryType):
        return f"X'{str(text).upper()}'"
    keyword, cast = _TYPED.get(type(t)), _CAST.get(type(t))
    if keyword is None and cast is None:
        return _quote(str(text))
    shown = _quote(_trim_fraction(str(text).replace("T", " ")))
    return f"{keyword} {shown}" if keyword is not None else f"CAST({shown} AS {cast})"


def _item(t: IcebergType, value: Any) -> str:
    """A value inside a struct, list or map literal: a null is written ``NULL``."""
    return default_sql(t, value) or "NULL"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _trim_fraction(text: str) -> str:
    """``10:00:00.000000`` -> ``10:00:00``, ``...20.120000+00:00`` -> ``...20.12+00:00``."""
    m = _FRACTION.fullmatch(text)
    if m is None:
        return text
    fraction = m["fraction"].rstrip("0")
    return m["head"] + ("." + fraction if fraction else "") + m["tail"]

"""A view's SQL between dialects: the ``spark`` representation iceduck writes, the DuckDB
text it reads a view by, and the names inside qualified as the view's version says.

Writing (:func:`spark_representation`): the ``duckdb`` text, as the user wrote it, is read
by sqlglot and written in Spark's dialect with ``unsupported_level=ErrorLevel.RAISE``. That
alone does not make the text right: sqlglot passes a function it does not know through
unchanged (``foo(x)``) and maps some it does know onto Spark functions of another meaning
(DuckDB's ``string_agg`` onto ``LISTAGG``, which Spark 3.5 lacks; ``list(x)`` onto
``collect_list``, which drops NULLs; ``epoch_ms(ts)`` onto ``TIMESTAMP_MILLIS``). So every
function of the query must be one of :data:`SPARK_FUNCTIONS`, classes checked to mean the
same in both engines, every cast one to a type of :data:`SPARK_CAST_TYPES`, and no construct
of :data:`SPARK_REFUSED` may appear; anything else is refused at ``CREATE VIEW``, naming
the construct and the dialect, unless the view is written with the ``duckdb``
representation only (``TBLPROPERTIES ('iceduck.spark-representation' = 'false')``).
Never a wrong ``spark`` text.

Reading (:func:`duckdb_text`): the ``duckdb`` representation as written; else the ``spark``
one, else the ``trino`` one, transpiled to DuckDB by sqlglot, refusing a function sqlglot
does not know (it would pass through under its name) and what sqlglot says it cannot
write, naming the construct and the dialect.

Names (:func:`qualified`): a view's query is resolved against its version's
``default-catalog`` and ``default-namespace`` (the spec: "default-namespace: Namespace to
use when a reference in the SELECT is a single identifier"), never against the reading
session's current namespace or its own objects, as Iceberg's ``ResolveViews`` in Spark
qualifies each name of a view's plan with the view's catalog and namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.errors import UnsupportedError as SqlglotUnsupported

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.parse import parse_statement
from iceduck.sql.references import table_refs
from iceduck.sql.rewrite import quote_identifier, splice

#: the dialects a view is read from, best first (the spec's examples name ``spark`` and
#: ``trino``); ``duckdb`` is iceduck's own and read as written
READ_ORDER = ("duckdb", "spark", "trino")

#: sqlglot's expression classes whose Spark spelling means what DuckDB's does (checked one
#: by one; aggregate NULL handling, argument order, result type family)
SPARK_FUNCTIONS: frozenset[type[exp.Expr]] = frozenset(
    {
        exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max,
        exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance, exp.VariancePop,
        exp.Median, exp.LogicalAnd, exp.LogicalOr,
        exp.RowNumber, exp.Rank, exp.DenseRank, exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue,
        exp.Coalesce, exp.Nullif, exp.If, exp.Case,
        exp.Lower, exp.Upper, exp.Substring, exp.Trim, exp.Concat, exp.ConcatWs,
        exp.Abs, exp.Ceil, exp.Floor, exp.Sqrt, exp.Ln, exp.Exp, exp.Pow, exp.Round, exp.Sign,
        exp.Year, exp.Month, exp.Day, exp.Quarter, exp.CurrentDate, exp.CurrentTimestamp,
        exp.Cast, exp.TryCast, exp.Array, exp.Struct, exp.Explode, exp.Unnest,
    }
)  # fmt: skip

#: DuckDB types a cast may name in a view written for Spark too (Spark's type of that name
#: holds the same values); TIMESTAMP is not here: Spark's is with local time zone
SPARK_CAST_TYPES: frozenset[exp.DType] = frozenset(
    {
        exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT,
        exp.DataType.Type.BIGINT, exp.DataType.Type.FLOAT, exp.DataType.Type.DOUBLE,
        exp.DataType.Type.DECIMAL, exp.DataType.Type.VARCHAR, exp.DataType.Type.TEXT,
        exp.DataType.Type.BOOLEAN, exp.DataType.Type.DATE,
    }
)  # fmt: skip

#: constructs Spark 3.5 lacks or reads otherwise, with why
SPARK_REFUSED: dict[type[exp.Expr], str] = {
    exp.Qualify: "QUALIFY (Spark 3.5 has none; sqlglot's rewrite adds a column to SELECT *)",
    exp.TableSample: "USING SAMPLE / TABLESAMPLE (another sampling method)",
    exp.SimilarTo: "SIMILAR TO",
    exp.Pivot: "PIVOT / UNPIVOT",
}

#: why some functions sqlglot does map are not in :data:`SPARK_FUNCTIONS`: DuckDB's names, why
_WHY_NOT: dict[type[exp.Expr], tuple[str, str]] = {
    exp.GroupConcat: ("string_agg / group_concat", "Spark 3.5 has no LISTAGG"),
    exp.ArrayAgg: ("list / array_agg", "Spark's collect_list drops NULLs, DuckDB's list keeps them"),
    exp.UnixToTime: ("epoch_ms / to_timestamp", "DuckDB's epoch_ms of a timestamp is a number"),
    exp.TimeToUnix: (
        "epoch",
        "DuckDB's epoch keeps fractions of a second, Spark's UNIX_TIMESTAMP drops them",
    ),
    exp.DateDiff: (
        "date_diff / datediff",
        "DuckDB counts the boundaries crossed, Spark the whole units elapsed",
    ),
    exp.ArgMax: ("arg_max / max_by", "DuckDB's skips NULL values, Spark's max_by returns them"),
    exp.ArgMin: ("arg_min / min_by", "DuckDB's skips NULL values, Spark's min_by returns them"),
    exp.Length: ("length / len", "of a list DuckDB counts its elements; Spark's length takes strings only"),
}

#: integer types: a cast to one rounds a fraction in DuckDB, truncates it in Spark
_INTEGRAL = frozenset(
    {exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.BIGINT}
)
#: what a cast to an integer type may take in a view written for Spark: whole values already
_WHOLE = (exp.Literal, exp.Round, exp.Floor, exp.Ceil)

SWITCH = "TBLPROPERTIES ('iceduck.spark-representation' = 'false')"


def spark_representation(query: str, view: str, columns: Sequence[tuple[str, str | None]] = ()) -> str:
    """The ``spark`` representation of ``query`` (DuckDB's SQL), or UnsupportedError naming
    the construct that has no faithful Spark spelling (see the module docstring).

    ``columns``: the view's schema as (output name, Spark type or None). The query is then
    read through a projection casting each column, by position, to the type the schema
    records (DuckDB's types), so Spark's ``UpCast`` of the view's query to its schema never
    meets a wider type Spark's functions give (``avg`` of a decimal is a decimal in Spark,
    a double in DuckDB)."""
    text = _spark_text(query, view)
    if not columns:
        return text
    inner = ", ".join(f"`_c{i}`" for i in range(len(columns)))
    items = ", ".join(
        f"`_c{i}` AS {_backquoted(name)}"
        if kind is None
        else f"CAST(`_c{i}` AS {kind}) AS {_backquoted(name)}"
        for i, (name, kind) in enumerate(columns)
    )
    return f"SELECT {items} FROM ({text}) AS `q`({inner})"


def _backquoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _spark_text(query: str, view: str) -> str:
    tree = _parsed(query, "duckdb", view)
    for node in tree.walk():
        reason = _spark_refusal(node)
        if reason is not None:
            raise UnsupportedError(
                f"view {view}: {reason}, so no Spark text of the query is certain to mean the same; "
                f"CREATE VIEW ... {SWITCH} AS ... writes only its duckdb representation "
                "(Spark then cannot read it)"
            )
    try:
        return tree.sql(dialect="spark", unsupported_level=ErrorLevel.RAISE)
    except SqlglotUnsupported as e:
        raise UnsupportedError(
            f"view {view}: sqlglot cannot write it in Spark's dialect: {e}; {SWITCH}"
        ) from e


def _spark_refusal(node: exp.Expr) -> str | None:
    """Why ``node`` keeps a query from being written for Spark, or None."""
    if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc):
        return f"DuckDB's function {node.name}() is not one iceduck knows Spark to have"
    for kind, why in SPARK_REFUSED.items():
        if isinstance(node, kind):
            return f"DuckDB's {why} has no Spark equivalent"
    if isinstance(node, exp.Star) and any(
        node.args.get(k) for k in ("except_", "replace", "rename", "ilike")
    ):
        return "DuckDB's SELECT * EXCLUDE / REPLACE has no Spark 3.5 equivalent"
    if isinstance(node, exp.Cast | exp.TryCast):
        target = node.to
        if target.this not in SPARK_CAST_TYPES:
            return f"a cast to DuckDB's {target.sql(dialect='duckdb')} has no Spark type of the same values"
        if target.this in _INTEGRAL and not isinstance(node.this, _WHOLE):
            return (
                f"a cast to {target.sql(dialect='duckdb')} rounds a fraction in DuckDB and truncates it in "
                "Spark (round(), floor() or ceil() first says which)"
            )
    if isinstance(node, exp.Substring):
        start = node.args.get("start")
        if not (isinstance(start, exp.Literal) and start.is_int and int(start.name) >= 1):
            return "DuckDB's substring from other than a literal position 1 or more (from 0 they differ)"
    if isinstance(node, exp.Func) and type(node) not in SPARK_FUNCTIONS:
        known = _WHY_NOT.get(type(node))
        if known is not None:
            return f"DuckDB's {known[0]} reads otherwise in Spark ({known[1]})"
        name = node.sql(dialect="duckdb").split("(")[0].strip().lower() or node.sql_name().lower()
        return f"DuckDB's {name}() is not among the functions checked to mean the same in Spark"
    return None


def duckdb_text(sql: str, dialect: str, view: str) -> str:
    """A representation's SQL as DuckDB's: as written for ``duckdb``, else transpiled by
    sqlglot from ``dialect``; UnsupportedError naming the construct and the dialect."""
    if dialect.lower() == "duckdb":
        return sql
    read = dialect.lower()
    if read not in READ_ORDER:
        raise UnsupportedError(
            f"view {view}: iceduck reads views written in {', '.join(READ_ORDER)}, not {dialect}"
        )
    tree = _parsed(sql, read, view)
    if read == "spark":
        try:
            tree = tree.transform(_as_spark_means)
        except SqlglotUnsupported as e:
            raise UnsupportedError(f"view {view}: its spark SQL cannot be translated to DuckDB's: {e}") from e
    for node in tree.walk():
        if isinstance(node, exp.Anonymous | exp.AnonymousAggFunc) and node.name.lower() not in _INTRODUCED:
            raise UnsupportedError(
                f"view {view}: the function {node.name}() of its {dialect} SQL has no DuckDB "
                "translation iceduck knows"
            )
    try:
        return tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE)
    except SqlglotUnsupported as e:
        raise UnsupportedError(f"view {view}: its {dialect} SQL cannot be translated to DuckDB's: {e}") from e


#: Spark's ``trunc`` / ``date_trunc`` units, as DuckDB's ``date_trunc`` names them
_TRUNC_UNITS = {
    "YEAR": "year", "YYYY": "year", "YY": "year", "QUARTER": "quarter", "MONTH": "month", "MON": "month",
    "MM": "month", "WEEK": "week", "DAY": "day", "DD": "day", "HOUR": "hour", "MINUTE": "minute",
    "SECOND": "second",
}  # fmt: skip

#: DuckDB functions :func:`_as_spark_means` writes
_INTRODUCED = frozenset({"arg_min_null", "arg_max_null", "json_valid", "trunc", "typeof"})

#: Spark constructs sqlglot's DuckDB spelling reads otherwise, refused when a view is read
_SPARK_UNREAD: dict[type[exp.Expr], str] = {
    exp.ExplodeOuter: "explode_outer (DuckDB has no outer unnest)",
    exp.PosexplodeOuter: "posexplode_outer (DuckDB has no outer unnest)",
    exp.ArrayDistinct: "array_distinct (DuckDB's list_distinct does not keep the first-seen order)",
    exp.Format: "format_string (Spark writes null for a NULL argument, DuckDB's printf gives NULL)",
    exp.StrToUnix: "unix_timestamp (DuckDB's strptime takes text only, not a timestamp)",
}


def _as_spark_means(node: exp.Expr) -> exp.Expr:
    """``node`` of a Spark query as Spark computes it, where sqlglot's DuckDB spelling
    differs: ``collect_list`` / ``collect_set`` of no values is ``[]`` (DuckDB's list is
    NULL); ``months_between`` is rounded to 8 digits unless told not to (``roundOff``);
    ``substring`` from position 0 starts at 1; a cast to an integer type truncates a fraction
    (Spark's non-ANSI cast; DuckDB's rounds); ``min_by`` / ``max_by`` keep a NULL value
    (DuckDB's ``arg_min_null``); ``get_json_object`` of
    text that is no JSON is NULL; ``trunc`` units are DuckDB's; a cast of a timestamp with a
    zone to text writes its local time. What has no such spelling
    (:data:`_SPARK_UNREAD`, ``LATERAL VIEW OUTER``, ``split`` with a limit) is refused."""
    for kind, what in _SPARK_UNREAD.items():
        if isinstance(node, kind):
            raise SqlglotUnsupported(what)
    if isinstance(node, exp.Lateral) and node.args.get("outer"):
        raise SqlglotUnsupported("LATERAL VIEW OUTER (sqlglot's DuckDB spelling drops empty arrays' rows)")
    if isinstance(node, exp.RegexpSplit) and node.args.get("limit") is not None:
        raise SqlglotUnsupported("split with a limit")
    parent = node.parent
    if isinstance(node, exp.Substring) and node.args.get("start") is not None:
        start = node.args["start"]
        if not (isinstance(start, exp.Literal) and start.is_int and int(start.name) != 0):
            node = node.copy()
            zero = exp.EQ(this=start.copy(), expression=exp.Literal.number(0))
            node.set("start", exp.If(this=zero, true=exp.Literal.number(1), false=start.copy()))
            return node
    if isinstance(node, exp.Cast | exp.TryCast) and node.to.this in _INTEGRAL and not _truncated(node.this):
        # Spark truncates a fraction (10.50 -> 10, '10.5' -> 10), DuckDB rounds: truncate first
        exact = exp.TryCast(this=node.this.copy(), to=exp.DataType.build("DECIMAL(38, 10)"))
        node = node.copy()
        node.set("this", exp.Anonymous(this="trunc", expressions=[exact]))
        return node
    if isinstance(node, exp.Cast | exp.TryCast) and node.to.this in _TEXT and not node.meta.get(_AS_SPARK):
        return _as_spark_text(node)
    if isinstance(node, exp.ArgMin | exp.ArgMax):
        name = "arg_min_null" if isinstance(node, exp.ArgMin) else "arg_max_null"
        return exp.Anonymous(this=name, expressions=[node.this.copy(), node.expression.copy()])
    if isinstance(node, exp.JSONExtractScalar | exp.JSONExtract) and not isinstance(parent, exp.If):
        valid = exp.Anonymous(this="json_valid", expressions=[node.this.copy()])
        return exp.If(this=valid, true=node.copy(), false=exp.Null())
    if isinstance(node, exp.DateTrunc) and isinstance(node.args.get("unit"), exp.Literal | exp.Var):
        unit = node.args["unit"].name.upper()
        if unit not in _TRUNC_UNITS:
            raise SqlglotUnsupported(f"trunc / date_trunc to {unit!r}")
        node = node.copy()
        node.set("unit", exp.Literal.string(_TRUNC_UNITS[unit]))
        return node
    if _collected(node) and not isinstance(parent, exp.Window | exp.Filter | exp.Coalesce):
        return exp.Coalesce(this=node.copy(), expressions=[exp.Array()])
    if isinstance(node, exp.MonthsBetween) and not isinstance(parent, exp.Round):
        roundoff = node.args.get("roundoff")
        if roundoff is None or roundoff.sql(dialect="spark").upper() != "FALSE":
            return exp.Round(this=node.copy(), decimals=exp.Literal.number(8))
    return node


#: text types: Spark writes a timestamp with a zone as its local time, DuckDB adds the offset
_TEXT = frozenset({exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR, exp.DataType.Type.CHAR})
#: the meta key marking the casts :func:`_as_spark_text` wrote (not rewritten again)
_AS_SPARK = "iceduck_as_spark"


def _as_spark_text(node: exp.Cast | exp.TryCast) -> exp.Expr:
    """A cast to text as Spark's: a timestamp with a zone is written as its local time in the
    session's zone (``2024-01-01 10:00:00.5``), where DuckDB's cast appends the offset
    (``+00``). The operand's type is known only when DuckDB binds the query, hence the
    ``typeof`` test; the other branch is the cast as written. (A node replaced by
    ``transform`` is not walked again, so the operand is translated here.)"""
    value = node.this.transform(_as_spark_means)
    if isinstance(value, exp.Literal) and value.is_string:
        return node
    local = exp.TryCast(this=value.copy(), to=exp.DataType.build("TIMESTAMP"))
    as_local = exp.Cast(this=local, to=node.to.copy())
    as_written = node.copy()
    as_written.set("this", value.copy())
    for cast in (as_local, as_written):
        cast.meta[_AS_SPARK] = True
    zoned = exp.EQ(
        this=exp.Anonymous(this="typeof", expressions=[value.copy()]),
        expression=exp.Literal.string("TIMESTAMP WITH TIME ZONE"),
    )
    return exp.If(this=zoned, true=as_local, false=as_written)


def _truncated(node: exp.Expr) -> bool:
    """Whether a cast to an integer type of ``node`` needs no truncating first: an integer
    literal, or what :func:`_as_spark_means` truncated already."""
    if isinstance(node, exp.Literal):
        return node.is_int
    return isinstance(node, exp.Anonymous) and node.name.lower() == "trunc"


def _collected(node: exp.Expr) -> bool:
    """Whether ``node`` is ``collect_list`` / ``collect_set`` (maybe with FILTER or OVER)."""
    if isinstance(node, exp.Window | exp.Filter):
        return _collected(node.this)
    return isinstance(node, exp.ArrayAgg | exp.ArrayUniqueAgg)


def _parsed(sql: str, dialect: str, view: str) -> exp.Expr:
    try:
        trees = sqlglot.parse(sql, read=dialect, error_level=ErrorLevel.RAISE)
    except (ParseError, TokenError) as e:
        raise UserError(f"view {view}: its {dialect} SQL does not parse: {str(e).splitlines()[0]}") from e
    if len(trees) != 1 or trees[0] is None:
        raise UserError(f"view {view}: its {dialect} SQL must be one query")
    return trees[0]


def qualified(text: str, catalog: str, namespace: tuple[str, ...], catalog_names: Iterable[str]) -> str:
    """``text`` (DuckDB's SQL) with each table name resolved as the view's version says:
    a one-part name in ``namespace``; a name led by ``catalog`` (the name this catalog has
    here) or one of ``catalog_names`` (the version's ``default-catalog``) in this catalog; each written
    ``catalog.ns...t`` in full, so nothing of the reading session (its current namespace,
    its temporary tables and views, variables) can capture it. CTE names stay as written."""
    statement = parse_statement(text, of=" of the view")
    names = {name.lower() for name in (catalog, *catalog_names)}
    edits = []
    for ref in table_refs(statement, bare_names=True):
        if ref.path is not None:
            continue
        parts = ref.parts
        if len(parts) == 1:
            parts = (*namespace, *parts)
        elif len(parts) >= 3 and parts[0].lower() in names:
            parts = parts[1:]
        identifiers = ref.node.parts
        span = (identifiers[0].meta["start"], identifiers[-1].meta["end"] + 1)
        edits.append((span, ".".join(quote_identifier(p) for p in (catalog, *parts))))
    return splice(statement.text, edits)


def has_parameters(text: str) -> bool:
    """Whether ``text`` has a parameter marker (``?``, ``$1``, ``$name``)."""
    return any(t.token_type.name in ("PLACEHOLDER", "PARAMETER") for t in parse_statement(text).tokens)


def one_part_names(text: str) -> list[str]:
    """The one-part table names of ``text`` that no CTE claims, as written."""
    return [
        r.parts[0]
        for r in table_refs(parse_statement(text), bare_names=True)
        if r.path is None and len(r.parts) == 1
    ]

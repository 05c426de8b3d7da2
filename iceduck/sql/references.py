"""Table references in a statement: which names are Iceberg tables, at which version, where.

Names follow Spark's Iceberg catalog (``SparkCatalog.loadTable``), so one SQL text means
the same table in both engines:

* ``ns.t`` or ``catalog.ns.t`` (a first part equal to the catalog name is the catalog);
  namespaces may be nested (``deep.er.t``), so a name is resolved by asking the catalog
  which split exists, the whole name as a table first;
* a last part naming a metadata table (``ns.t.snapshots``, ``ns.t.files``...), a branch
  (``ns.t.branch_dev``), a tag (``ns.t.tag_v1``), or Spark's ``snapshot_id_<id>`` /
  ``at_timestamp_<millis>`` selectors, each tried only when the whole name is no table;
* ``t VERSION AS OF <snapshot id | 'branch' | 'tag'>`` and ``t TIMESTAMP AS OF <time>``
  (also ``FOR SYSTEM_VERSION``/``FOR SYSTEM_TIME``);
* ``iceduck_scan('<metadata file | table folder>')`` reads a table without a catalog
  (named to stay clear of DuckDB's own ``iceberg_scan``).

A one-part name (``orders``) is a reference only when asked for (``bare_names``: the
session reads it in its current namespace, set by ``USE``), and never when a CTE in scope
has that name: the CTE wins, as in Spark and DuckDB. A one-part name that names no Iceberg table, and
every other name (DuckDB functions like ``read_parquet``, ``range(10)``), passes through to
DuckDB untouched.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from iceduck.catalog.base import TableIdentifier
from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.literals import Kind, Moment, SqlLiteral, literal_of, parse_timestamp, utc_nanos
from iceduck.sql.parse import DIALECT, Statement

TABLE_FUNCTION = "iceduck_scan"
#: reads one Paimon table folder without attaching its warehouse
PAIMON_FUNCTION = "paimon_scan"
TABLE_FUNCTIONS = frozenset({TABLE_FUNCTION, PAIMON_FUNCTION})
#: ``table_changes('ns.t', start, end, ...)``: the changelog of a catalog table
CHANGES_FUNCTION = "table_changes"

#: computes the epoch millis of a SQL timestamp expression (see :func:`table_refs`)
Evaluator = Callable[[str], int | None]

#: Spark's metadata tables (``MetadataTableType``), by the name that follows the table's
METADATA_TABLES = frozenset(
    {
        "snapshots",
        "history",
        "refs",
        "manifests",
        "files",
        "data_files",
        "delete_files",
        "entries",
        "partitions",
        "metadata_log_entries",
        "all_manifests",
        "all_files",
        "all_data_files",
        "all_delete_files",
        "all_entries",
        "position_deletes",
    }
)
BRANCH_PREFIX = "branch_"
TAG_PREFIX = "tag_"
SNAPSHOT_ID_PREFIX = "snapshot_id_"
AT_TIMESTAMP_PREFIX = "at_timestamp_"


@dataclass(frozen=True)
class TimeTravel:
    """``VERSION AS OF`` (a snapshot id, or a ref name) or ``TIMESTAMP AS OF`` (epoch millis)."""

    version: int | str | None = None
    timestamp_ms: int | None = None

    def __str__(self) -> str:
        if self.version is not None:
            return f"VERSION AS OF {self.version!r}"
        return f"TIMESTAMP AS OF {self.timestamp_ms} ms"


@dataclass(frozen=True)
class ChangesBound:
    """One end of ``table_changes``: a snapshot id, a branch or tag name, or a time (epoch
    millis); a string that reads as a time keeps both (a ref of that name wins)."""

    snapshot_id: int | None = None
    ref: str | None = None
    timestamp_ms: int | None = None


@dataclass(frozen=True)
class ChangesCall:
    """``table_changes('ns.t', start, end, identifier_columns := [...], compute_updates :=
    b, net_changes := b)``: start exclusive, end inclusive; None is open."""

    start: ChangesBound | None = None
    end: ChangesBound | None = None
    identifier_columns: tuple[str, ...] | None = None
    compute_updates: bool | None = None
    net_changes: bool = False


@dataclass(frozen=True)
class TableRef:
    """One table reference that may be an Iceberg table.

    ``span`` is the ``[start, end)`` range of the statement text that the rewrite replaces:
    the (dotted) name or table-function call plus any time-travel clause; an alias after
    it stays in place.
    """

    node: exp.Table
    parts: tuple[str, ...]
    alias: str | None
    span: tuple[int, int]
    time_travel: TimeTravel | None = None
    #: the argument of ``iceduck_scan(...)`` or ``paimon_scan(...)``; None for a named table
    path: str | None = None
    #: which table function ``path`` was given to
    function: str = TABLE_FUNCTION
    #: ``table_changes(...)``: the changelog of the table ``parts`` names
    changes: ChangesCall | None = None

    @property
    def display(self) -> str:
        return f"{self.function}({self.path!r})" if self.path is not None else ".".join(self.parts)


@dataclass(frozen=True)
class ResolvedName:
    """A name resolved against the catalog: the table and what of it is read."""

    identifier: TableIdentifier
    metadata_table: str | None = None
    branch: str | None = None
    tag: str | None = None
    snapshot_id: int | None = None
    timestamp_ms: int | None = None


# -- finding references -------------------------------------------------------------------------


def table_refs(
    statement: Statement,
    timezone: str = "UTC",
    params: object = None,
    evaluate: Evaluator | None = None,
    bare_names: bool = False,
) -> list[TableRef]:
    """The references in ``statement`` that may name Iceberg tables, in text order.

    ``bare_names`` includes one-part names that no CTE in scope claims (see the module
    docstring); without it, time travel on a one-part name is refused.

    ``timezone`` reads ``TIMESTAMP AS OF`` values without an offset, as Spark reads them
    in its session time zone; ``evaluate`` computes a ``TIMESTAMP AS OF`` value that is an
    expression rather than a constant (``now() - INTERVAL 1 HOUR``): given its SQL text,
    it returns epoch milliseconds (the session asks DuckDB).
    """
    refs: list[TableRef] = []
    for node in statement.tree.find_all(exp.Table):
        ref = _reference(statement, node, timezone, params, evaluate, bare_names)
        if ref is not None:
            refs.append(ref)
    refs.sort(key=lambda r: r.span[0])
    return refs


def _reference(
    statement: Statement,
    node: exp.Table,
    timezone: str,
    params: object,
    evaluate: Evaluator | None,
    bare_names: bool,
) -> TableRef | None:
    function = node.this if isinstance(node.this, exp.Anonymous) else None
    alias = node.alias or None
    version = node.args.get("version")
    if function is not None and function.name.lower() == CHANGES_FUNCTION and not node.args.get("db"):
        start = function.meta["start"]
        call_parts, call = _changes_call(function, timezone, params)
        span = (start, _call_end(statement.tokens, start))
        return TableRef(node, call_parts, alias, span, None, None, CHANGES_FUNCTION, call)
    if function is not None:
        if function.name.lower() not in TABLE_FUNCTIONS or node.args.get("db"):
            return None
        path = _function_path(function)
        start = function.meta["start"]
        end = _call_end(statement.tokens, start)
        parts: tuple[str, ...] = ()
    else:
        identifiers = node.parts
        named = bool(identifiers) and all(isinstance(p, exp.Identifier) for p in identifiers)
        if named and len(identifiers) == 1 and bare_names:  # FROM 'x.csv' is a file, not a name
            start = identifiers[0].meta.get("start")
            named = start is not None and statement.text[start] != "'" and not _is_cte(node)
        elif len(identifiers) < 2:
            named = False
        if not named:
            if version is not None:
                raise UnsupportedError(
                    f"time travel on {node.sql(dialect=DIALECT)}: not an Iceberg table name"
                )
            return None
        path = None
        parts = tuple(p.name for p in identifiers)
        start = identifiers[0].meta["start"]
        end = identifiers[-1].meta["end"] + 1
    travel = None
    if version is not None:
        begin, end = _version_value_span(statement, end, version)
        value_text = statement.text[begin:end]
        travel = time_travel(version, timezone, params, (lambda: evaluate(value_text)) if evaluate else None)
    name = function.name.lower() if function is not None else TABLE_FUNCTION
    return TableRef(node, parts, alias, (start, end), travel, path, name)


_CHANGES_USAGE = (
    "table_changes('ns.t' [, start [, end]] [, identifier_columns := ['id'], compute_updates := true, "
    "net_changes := false]): start (exclusive) and end (inclusive) are snapshot ids, branch or tag "
    "names, timestamps, or NULL"
)


def _changes_call(
    function: exp.Anonymous, timezone: str, params: object
) -> tuple[tuple[str, ...], ChangesCall]:
    """The table name and arguments of a ``table_changes(...)`` call."""
    positional = [a for a in function.expressions if not isinstance(a, exp.PropertyEQ)]
    named = {a.this.name.lower(): a.expression for a in function.expressions if isinstance(a, exp.PropertyEQ)}
    if not positional or len(positional) > 3:
        raise UserError(_CHANGES_USAGE)
    table = literal_of(positional[0], params)
    if table is None or table.kind is not Kind.STRING or not table.value.strip():
        raise UserError(f"the first argument names the table: {_CHANGES_USAGE}")
    parts = tuple(p.strip().strip('"`') for p in table.value.split("."))
    bounds = [_changes_bound(a, timezone, params) for a in positional[1:]] + [None, None]
    unknown = set(named) - {"identifier_columns", "compute_updates", "net_changes"}
    if unknown:
        raise UserError(f"table_changes has no argument {sorted(unknown)[0]}: {_CHANGES_USAGE}")
    columns = None
    if "identifier_columns" in named:
        given = named["identifier_columns"]
        items = given.expressions if isinstance(given, exp.Array) else []
        values = [literal_of(i, params) for i in items]
        if not isinstance(given, exp.Array) or any(v is None or v.kind is not Kind.STRING for v in values):
            raise UserError("identifier_columns takes a list of column names: ['id', ...]")
        columns = tuple(v.value for v in values if v is not None)
    call = ChangesCall(
        bounds[0],
        bounds[1],
        columns,
        _flag(named.get("compute_updates"), "compute_updates", params),
        bool(_flag(named.get("net_changes"), "net_changes", params)),
    )
    return parts, call


def _flag(node: exp.Expr | None, name: str, params: object) -> bool | None:
    if node is None:
        return None
    value = literal_of(node, params)
    if value is None or value.kind is not Kind.BOOLEAN:
        raise UserError(f"{name} takes true or false")
    return bool(value.value)


def _changes_bound(node: exp.Expr, timezone: str, params: object) -> ChangesBound | None:
    value = literal_of(node, params)
    if value is None:
        raise UserError(f"a changelog bound must be a constant: {_CHANGES_USAGE}")
    if value.kind is Kind.NULL:
        return None
    if value.kind is Kind.INTEGER:
        return ChangesBound(snapshot_id=int(value.value))
    if value.kind is Kind.STRING:
        return ChangesBound(ref=value.value, timestamp_ms=_timestamp_ms(value, timezone))
    millis = (
        _timestamp_ms(value, timezone)
        if value.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.DATE)
        else None
    )
    if millis is None:
        raise UserError(f"not a changelog bound: {node.sql(dialect=DIALECT)}: {_CHANGES_USAGE}")
    return ChangesBound(timestamp_ms=millis)


def _is_cte(node: exp.Table) -> bool:
    """Whether a one-part name is a CTE of a query around it (``WITH t AS (...) ... t``),
    compared without case as DuckDB compares names."""
    name = node.name.lower()
    parent = node.parent
    while parent is not None:
        ctes = parent.args.get("with_") or parent.args.get("with")
        if isinstance(ctes, exp.With) and any(c.alias.lower() == name for c in ctes.expressions):
            return True
        parent = parent.parent
    return False


def _function_path(function: exp.Anonymous) -> str:
    args = function.expressions
    if len(args) != 1 or not (isinstance(args[0], exp.Literal) and args[0].is_string):
        if function.name.lower() == PAIMON_FUNCTION:
            raise UserError(f"{PAIMON_FUNCTION}() takes one string: the path of a Paimon table folder")
        raise UserError(f"{TABLE_FUNCTION}() takes one string: the path of a metadata file or table folder")
    return args[0].this


def _token_index(tokens: tuple[Token, ...], start: int) -> int:
    for i, token in enumerate(tokens):
        if token.start == start:
            return i
    raise UserError(f"internal: no token starts at offset {start}")


def _call_end(tokens: tuple[Token, ...], name_start: int) -> int:
    """The end offset (exclusive) of a function call whose name starts at ``name_start``."""
    i = _token_index(tokens, name_start) + 1
    depth = 0
    for token in tokens[i:]:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return token.end + 1
    raise UserError("unbalanced parentheses after a table function")


def _version_value_span(statement: Statement, name_end: int, version: exp.Version) -> tuple[int, int]:
    """Where the value of the time-travel clause after a table name starts and ends.

    The clause's value can be any expression, and sqlglot does not record where an
    expression ends, so the value's text is found as the shortest run of tokens after
    ``AS OF`` that parses to the same expression.
    """
    tokens = statement.tokens
    i = next(n for n, t in enumerate(tokens) if t.start >= name_end)
    while i < len(tokens) and tokens[i].text.upper() != "OF":
        i += 1
    first = i + 1
    if first >= len(tokens):
        raise UserError("time travel clause without a value")
    begin = tokens[first].start
    wanted = version.expression
    depth = 0
    for token in tokens[first:]:
        depth += (token.token_type is TokenType.L_PAREN) - (token.token_type is TokenType.R_PAREN)
        if depth != 0:
            continue  # sqlglot forgives a missing ")": only balanced runs can be the value
        parsed = _parse_select(statement.text[begin : token.end + 1])
        if (
            isinstance(parsed, exp.Select)
            and len(parsed.expressions) == 1
            and parsed.expressions[0] == wanted
        ):
            return begin, token.end + 1
    raise UnsupportedError(f"cannot locate the end of {version.sql(dialect=DIALECT)}")


def _parse_select(text: str) -> exp.Expr | None:
    try:
        trees = DIALECT.parse(f"SELECT {text}")
    except (ParseError, TokenError):
        return None
    return trees[0] if len(trees) == 1 else None


# -- time travel ----------------------------------------------------------------------------------


def time_travel(
    version: exp.Version,
    timezone: str = "UTC",
    params: object = None,
    evaluate: Callable[[], int | None] | None = None,
) -> TimeTravel:
    """The snapshot selector of a ``VERSION AS OF`` / ``TIMESTAMP AS OF`` clause.

    ``evaluate`` computes a non-constant timestamp value (epoch millis), if given.
    """
    what = str(version.this).upper()
    kind = str(version.args.get("kind") or "").upper()
    if kind != "AS OF":
        raise UnsupportedError(f"{what} {kind}: only VERSION AS OF and TIMESTAMP AS OF are supported")
    value = literal_of(version.expression, params)
    if what == "VERSION":
        if value is not None and value.kind is Kind.INTEGER:
            return TimeTravel(version=value.value)
        if value is not None and value.kind is Kind.STRING:
            return TimeTravel(version=value.value)
        raise UserError(
            "VERSION AS OF takes a snapshot id or the name of a branch or tag"
            + _parameter_given(version.expression, params)
        )
    if what in ("TIMESTAMP", "SYSTEM_TIME"):
        millis = _timestamp_ms(value, timezone)
        if millis is None and value is None and evaluate is not None:
            millis = evaluate()
        if millis is None:
            given = _parameter_given(version.expression, params)
            shown = given or f", got {version.expression.sql(dialect=DIALECT)}"
            raise UserError(f"TIMESTAMP AS OF takes a constant timestamp{shown}")
        return TimeTravel(timestamp_ms=millis)
    raise UnsupportedError(f"{what} AS OF is not supported: use VERSION AS OF or TIMESTAMP AS OF")


def _parameter_given(node: exp.Expr, params: object) -> str:
    """What a time-travel parameter was bound to, for a refusal's message ("" when the
    value is no parameter)."""
    if not isinstance(node, exp.Placeholder) or not node.name:
        return ""
    name = node.name
    values: dict[str, object] = {}
    if isinstance(params, dict):
        values = {str(k): v for k, v in params.items()}
    elif isinstance(params, list | tuple):
        values = {str(n): v for n, v in enumerate(params, 1)}
    if name not in values:
        return f", but parameter ${name} has no value"
    return f", got parameter ${name} = {values[name]!r}"


def _timestamp_ms(value: SqlLiteral | None, timezone: str) -> int | None:
    """Epoch millis of a time-travel timestamp; numbers are seconds, as Spark casts them."""
    if value is None:
        return None
    moment: Moment | None
    if value.kind in (Kind.INTEGER, Kind.DECIMAL, Kind.DOUBLE):  # 1e999 is inf: no moment
        return int(value.value * 1000) if math.isfinite(value.value) else None
    if value.kind is Kind.STRING:
        moment = parse_timestamp(value.value)
    elif value.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        moment = value.value
    elif value.kind is Kind.DATE:
        moment = Moment(value.value * 86_400 * 1_000_000_000)
    else:
        return None
    if moment is None:
        return None
    nanos = utc_nanos(moment, timezone)
    return None if nanos is None else nanos // 1_000_000


# -- resolving names ------------------------------------------------------------------------------


def name_candidates(
    parts: tuple[str, ...], catalog_name: str, namespace: tuple[str, ...] = ()
) -> Iterator[ResolvedName]:
    """Every reading of a dotted name, in the order Spark tries them.

    A leading catalog name is dropped first (and kept as a namespace level only if that
    finds nothing); the whole name is a table before a last part is read as a metadata
    table, branch, tag or snapshot selector. With a current ``namespace`` (``USE``), a name
    of one or two parts is then read inside it too (``orders``, ``orders.snapshots``,
    ``orders.branch_dev``), after every reading of the name as written, so a name that
    means a table today keeps meaning it.
    """
    readings = [parts]
    if len(parts) >= 3 and parts[0].lower() == catalog_name.lower():
        readings.insert(0, parts[1:])
    yield from _readings(readings)
    if namespace and len(parts) <= 2:
        yield from _readings([(*namespace, *parts)])


def _readings(readings: list[tuple[str, ...]]) -> Iterator[ResolvedName]:
    for names in readings:
        if len(names) >= 2:
            yield ResolvedName(TableIdentifier(tuple(names[:-1]), names[-1]))
    for names in readings:
        if len(names) >= 3:
            suffix = names[-1]
            table = TableIdentifier(tuple(names[:-2]), names[-2])
            selector = _suffix(table, suffix)
            if selector is not None:
                yield selector


def is_selector(suffix: str) -> bool:
    """Whether a last name part reads a table's metadata table, branch, tag or snapshot."""
    return _suffix(TableIdentifier((), ""), suffix) is not None


def _suffix(table: TableIdentifier, suffix: str) -> ResolvedName | None:
    lowered = suffix.lower()
    if lowered in METADATA_TABLES:
        return ResolvedName(table, metadata_table=lowered)
    if suffix.startswith(BRANCH_PREFIX) and len(suffix) > len(BRANCH_PREFIX):
        return ResolvedName(table, branch=suffix[len(BRANCH_PREFIX) :])
    if suffix.startswith(TAG_PREFIX) and len(suffix) > len(TAG_PREFIX):
        return ResolvedName(table, tag=suffix[len(TAG_PREFIX) :])
    for prefix, field in ((SNAPSHOT_ID_PREFIX, "snapshot_id"), (AT_TIMESTAMP_PREFIX, "timestamp_ms")):
        rest = suffix[len(prefix) :]
        if suffix.startswith(prefix) and rest.isascii() and rest.isdigit():
            return ResolvedName(table, **{field: int(rest)})  # type: ignore[arg-type]
    return None


def resolve_name(
    parts: tuple[str, ...],
    catalog_name: str,
    table_exists: Callable[[TableIdentifier], bool],
    namespace: tuple[str, ...] = (),
) -> ResolvedName | None:
    """The first reading of ``parts`` (:func:`name_candidates`, in the current
    ``namespace`` if any) whose table exists, else None."""
    for candidate in name_candidates(parts, catalog_name, namespace):
        if table_exists(candidate.identifier):
            return candidate
    return None


#: Iceberg's metadata columns a query may name (spec, "Reserved Field IDs"); Spark shows them
#: only when asked for by name, never in ``*``
METADATA_COLUMN_NAMES = frozenset({"_file", "_pos", "_spec_id", "_row_id", "_last_updated_sequence_number"})


def metadata_columns_named(statement: Statement) -> frozenset[str]:
    """The metadata columns (``_row_id``, ``_file``, ...) the statement names anywhere.

    A name the text does not hold (without case) cannot be named: most statements are
    answered by that test, without a walk of the tree on every execution."""
    lowered = statement.text.lower()
    if not any(name in lowered for name in METADATA_COLUMN_NAMES):
        return frozenset()
    return frozenset(c.name for c in statement.tree.find_all(exp.Column) if c.name in METADATA_COLUMN_NAMES)

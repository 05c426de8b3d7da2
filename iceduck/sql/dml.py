"""INSERT, DELETE, UPDATE, MERGE INTO and TRUNCATE -> :mod:`iceduck.sql.statements`.

The query, conditions and values are the user's text, sliced from the normalised
statement (``?`` already numbered ``$1``...; backquoted names double-quoted), for
DuckDB to run later; a WHERE or ON condition is a
:class:`~iceduck.sql.condition.Condition`, which also carries its parsed tree.
Grammar (Spark's and DuckDB's spellings)::

    INSERT [OR REPLACE] (INTO | OVERWRITE) [TABLE] t [PARTITION (c = v, ...)] [(col, ...)]
        [BY NAME | BY POSITION] <query | VALUES ...>
    DELETE FROM t [[AS] a] [WHERE cond]             TRUNCATE [TABLE] t
    UPDATE t [[AS] a] SET path = expr, ... [FROM relations] [WHERE cond]
    MERGE INTO t [[AS] a] USING <name | function(args) | (query)> [[AS] s [(cols)]] ON cond
        WHEN MATCHED [AND cond] THEN UPDATE SET * | UPDATE SET path = expr, ... | DELETE
        WHEN NOT MATCHED [BY TARGET] [AND cond] THEN INSERT * | INSERT (cols) VALUES (exprs)
        WHEN NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET path = expr, ... | DELETE

DuckDB's ``THEN UPDATE`` and ``THEN INSERT [BY NAME]`` without a list mean ``SET *`` /
``INSERT *``. A ``PARTITION (c)`` entry without a value is Spark's dynamic partition
column and adds nothing to ``static_partition``.

Assignment targets may be qualified by the target's alias (or, without an alias, by the
table's own name): ``SET t.x = s.x`` assigns ``x``, as Spark resolves it. A longer path
whose first part is not that qualifier names a struct field (``SET point.x = 0``). The
table's full name (``SET db.t.x``) is recognised once the table is resolved
(:mod:`iceduck.sql.qualifiers`).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot.tokens import TokenType

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.condition import Condition
from iceduck.sql.ddl_tokens import Cursor
from iceduck.sql.rewrite import quote_identifier
from iceduck.sql.statements import (
    ColumnPath,
    Delete,
    Insert,
    Merge,
    MergeAction,
    MergeClause,
    MergeMatch,
    Name,
    Update,
)

_QUERY_STARTS = frozenset({"SELECT", "WITH", "VALUES", "FROM", "TABLE"})
_CLAUSE_WORDS = frozenset({"WHERE", "SET", "FROM", "USING", "ON", "RETURNING", "WHEN", "THEN"})


def insert(c: Cursor) -> Insert:
    replace = c.accept("OR", "REPLACE")
    if c.word() == "OR":
        raise UnsupportedError(
            f"INSERT OR {c.word(1)} is not supported: INSERT OR REPLACE replaces rows by the "
            "table's identifier fields"
        )
    overwrite = c.accept("OVERWRITE")
    if replace and overwrite:
        raise UserError("INSERT OR REPLACE cannot OVERWRITE: it replaces rows by key")
    if not overwrite:
        c.expect("INTO")
    c.accept("TABLE")
    name = c.name()
    static = _partition_clause(c) if c.accept("PARTITION") else None
    columns: tuple[str, ...] | None = None
    if (
        c.at_type(TokenType.L_PAREN)
        and c.word(1) not in _QUERY_STARTS
        and not c.at_type(TokenType.L_PAREN, 1)
    ):
        columns = _column_list(c)
    by_name = c.accept("BY", "NAME")
    if not by_name:
        c.accept("BY", "POSITION")
    if c.at("DEFAULT", "VALUES"):
        raise UnsupportedError("INSERT ... DEFAULT VALUES is not supported")
    if c.at("REPLACE"):
        raise UnsupportedError("INSERT INTO ... REPLACE WHERE is not supported: use DELETE then INSERT")
    if by_name and columns is not None:
        raise UserError("INSERT ... BY NAME takes the columns from the query: do not list them")
    query = _query(c)
    return Insert(name, query, columns, overwrite, static, by_name, replace)


def _partition_clause(c: Cursor) -> dict[str, str] | None:
    c.expect_type(TokenType.L_PAREN, "( after PARTITION")
    static: dict[str, str] = {}
    while True:
        column = c.identifier("a partition column")
        if c.accept_type(TokenType.EQ):
            if column in static:
                raise UserError(f"partition column {column} is given twice")
            static[column] = c.expression(f"the value of partition column {column}", comma=True)
        if not c.accept_type(TokenType.COMMA):
            break
    c.expect_type(TokenType.R_PAREN, ") after the PARTITION values")
    return static or None


def _column_list(c: Cursor) -> tuple[str, ...]:
    c.expect_type(TokenType.L_PAREN, "(")
    columns = [c.identifier("a column name")]
    while c.accept_type(TokenType.COMMA):
        columns.append(c.identifier("a column name"))
    c.expect_type(TokenType.R_PAREN, ") after the column names")
    lowered = [col.lower() for col in columns]
    if len(set(lowered)) != len(lowered):
        raise UserError(f"a column is listed twice: {', '.join(columns)}")
    return tuple(columns)


def _query(c: Cursor) -> str:
    """The rest of the statement as the query; DuckDB's trailing clauses are refused."""
    start = c.i
    depth = 0
    for k in range(start, len(c.tokens)):
        token_type = c.tokens[k].token_type
        depth += token_type in (TokenType.L_PAREN, TokenType.L_BRACKET)
        depth -= token_type in (TokenType.R_PAREN, TokenType.R_BRACKET)
        word = c.word(k - c.i)
        if depth == 0 and word == "ON" and c.word(k - c.i + 1) == "CONFLICT":
            raise UnsupportedError(
                "INSERT ... ON CONFLICT is not supported: INSERT OR REPLACE INTO replaces rows "
                "by the table's identifier fields"
            )
        if depth == 0 and word == "RETURNING":
            raise UnsupportedError(f"INSERT ... {word} is not supported")
    if c.at("VALUES") and c.peek(1) is None:
        c.next()
        raise c.error("rows after VALUES: VALUES (1, 'a'), (2, 'b')")
    return c.rest("a query or VALUES after INSERT")


# -- DELETE / TRUNCATE / UPDATE ------------------------------------------------------------


def _alias(c: Cursor) -> str | None:
    if c.accept("AS"):
        return c.identifier("an alias")
    token = c.peek()
    if (
        token is None
        or c.word() in _CLAUSE_WORDS
        or token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER)
    ):
        return None
    return c.identifier("an alias")


def _where(c: Cursor) -> Condition | None:
    if not c.accept("WHERE"):
        return None
    where = c.expression("a condition after WHERE", frozenset({"RETURNING"}))
    if c.at("RETURNING"):
        raise UnsupportedError("RETURNING is not supported")
    return Condition(where)


def delete(c: Cursor) -> Delete:
    c.expect("FROM")
    name = c.name()
    alias = _alias(c)
    if c.at("USING"):
        raise UnsupportedError("DELETE ... USING is not supported: use WHERE ... IN (SELECT ...) or MERGE")
    return Delete(name, alias, _where(c))


def truncate(c: Cursor) -> Delete:
    c.accept("TABLE")
    return Delete(c.name())


def update(c: Cursor) -> Update:
    name = c.name()
    alias = _alias(c)
    c.expect("SET")
    assignments = _assignments(c, _qualifier(name, alias), frozenset({"FROM", "WHERE", "RETURNING"}))
    from_ = (
        c.expression("relations after FROM", frozenset({"WHERE", "RETURNING"})) if c.accept("FROM") else None
    )
    return Update(name, assignments, alias, _where(c), from_)


def _qualifier(name: Name, alias: str | None) -> str:
    return (alias or name[-1]).lower()


def _assignments(c: Cursor, qualifier: str, stops: frozenset[str]) -> tuple[tuple[ColumnPath, str], ...]:
    assignments: list[tuple[ColumnPath, str]] = []
    while True:
        path = c.name("a column to assign")
        if len(path) > 1 and path[0].lower() == qualifier:
            path = path[1:]
        c.expect_type(TokenType.EQ, "= after the column to assign")
        assignments.append((path, c.expression(f"a value for {'.'.join(path)}", stops, comma=True)))
        if not c.accept_type(TokenType.COMMA):
            break
    targets = [tuple(p.lower() for p in path) for path, _ in assignments]
    if len(set(targets)) != len(targets):
        raise UserError("a column is assigned twice")
    return tuple(assignments)


# -- MERGE --------------------------------------------------------------------------------


def merge(c: Cursor) -> Merge:
    c.expect("INTO")
    name = c.name()
    alias = _alias(c)
    c.expect("USING")
    if c.at_type(TokenType.L_PAREN):
        start = c.i
        c.parenthesised("the source query")
        source = c.span(start, c.i)
    else:
        start = c.i
        c.name("the source table")
        if c.at_type(TokenType.L_PAREN):  # a table function: read_parquet('f'), range(3)
            _arguments(c)
        else:
            _time_travel(c)
        source = c.span(start, c.i)
    source_alias = _alias(c)
    if source_alias is not None and c.at_type(TokenType.L_PAREN):  # s(id, v) names the columns
        columns = ", ".join(quote_identifier(n) for n in _column_list(c))
        source = f"{source} AS {quote_identifier(source_alias)}({columns})"
    c.expect("ON")
    on = Condition(c.expression("the ON condition", frozenset({"WHEN"})))
    clauses: list[MergeClause] = []
    qualifier = _qualifier(name, alias)
    while c.accept("WHEN"):
        clauses.append(_merge_clause(c, qualifier))
    if not clauses:
        raise c.error("WHEN [NOT] MATCHED ... THEN")
    check_unconditional_last(clauses)
    return Merge(name, source, on, tuple(clauses), alias, source_alias)


#: how Spark's messages name each kind of clause (``NON_LAST_*_CLAUSE_OMIT_CONDITION``)
_KIND_NAMES = {
    MergeMatch.MATCHED: "MATCHED",
    MergeMatch.NOT_MATCHED: "NOT MATCHED [BY TARGET]",
    MergeMatch.NOT_MATCHED_BY_SOURCE: "NOT MATCHED BY SOURCE",
}


def check_unconditional_last(clauses: Sequence[MergeClause]) -> None:
    """Only the last clause of each kind may omit its condition.

    A clause without ``AND`` takes every row of its kind, so a later clause of that kind
    could never run. Spark 3.5 refuses this while parsing (``AstBuilder.visitMergeIntoTable``;
    error classes ``NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION``,
    ``NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION`` and
    ``NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION``: "When there are more than
    one MATCHED clauses in a MERGE statement, only the last MATCHED clause can omit the
    condition."), and DuckDB too ("Unconditional WHEN MATCHED clause was already defined -
    any following WHEN MATCHED clause would be unreachable"). The kinds are independent:
    an unconditional ``WHEN MATCHED`` may be followed by ``WHEN NOT MATCHED`` clauses.
    """
    for kind, shown in _KIND_NAMES.items():
        of_kind = [c for c in clauses if c.match is kind]
        if any(c.condition is None for c in of_kind[:-1]):
            raise UserError(
                f"MERGE: when there is more than one WHEN {shown} clause, only the last one may omit "
                f"its condition (a WHEN {shown} clause without AND takes every such row, so the "
                "clauses after it could never apply)"
            )


def _arguments(c: Cursor) -> None:
    """Skip a table function's ``( ... )`` (possibly empty)."""
    c.expect_type(TokenType.L_PAREN, "(")
    if not c.accept_type(TokenType.R_PAREN):
        c.expression("the function's arguments")
        c.expect_type(TokenType.R_PAREN, ") after the function's arguments")


def _time_travel(c: Cursor) -> None:
    """Skip ``[FOR] VERSION|TIMESTAMP|SYSTEM_TIME AS OF <literal>`` after a source table name
    (it stays in the source text, which the session resolves like a query's)."""
    k = 1 if c.at("FOR") else 0
    if (
        c.word(k) in ("VERSION", "TIMESTAMP", "SYSTEM_TIME")
        and c.word(k + 1) == "AS"
        and c.word(k + 2) == "OF"
    ):
        c.i += k + 3
        c.accept("TIMESTAMP")  # TIMESTAMP AS OF TIMESTAMP '...'
        if c.at_type(TokenType.STRING) or c.at_type(TokenType.NUMBER) or c.at_type(TokenType.PARAMETER):
            token = c.next()
            if token.token_type is TokenType.PARAMETER:
                c.next()
        else:
            raise c.error("a snapshot id, ref name or timestamp after AS OF")


def _merge_clause(c: Cursor, qualifier: str) -> MergeClause:
    if c.accept("MATCHED"):
        match = MergeMatch.MATCHED
    elif c.accept("NOT", "MATCHED"):
        match = MergeMatch.NOT_MATCHED
        if c.accept("BY", "SOURCE"):
            match = MergeMatch.NOT_MATCHED_BY_SOURCE
        else:
            c.accept("BY", "TARGET")
    else:
        raise c.error("MATCHED or NOT MATCHED after WHEN")
    condition = c.expression("a condition after AND", frozenset({"THEN"})) if c.accept("AND") else None
    c.expect("THEN")
    clause = _merge_action(c, match, condition, qualifier)
    inserting = clause.action in (MergeAction.INSERT, MergeAction.INSERT_ALL)
    if inserting != (match is MergeMatch.NOT_MATCHED):
        allowed = "INSERT" if match is MergeMatch.NOT_MATCHED else "UPDATE or DELETE"
        raise UserError(
            f"WHEN {match.value.upper()} clauses take {allowed}, not {clause.action.value.upper()}"
        )
    if match is MergeMatch.NOT_MATCHED_BY_SOURCE and clause.action is MergeAction.UPDATE_ALL:
        raise UserError("WHEN NOT MATCHED BY SOURCE has no source row: UPDATE SET * is not possible")
    return clause


def _merge_action(c: Cursor, match: MergeMatch, condition: str | None, qualifier: str) -> MergeClause:
    if c.accept("DELETE"):
        return MergeClause(match, MergeAction.DELETE, condition)
    if c.accept("UPDATE"):
        if not c.accept("SET") or c.accept_type(TokenType.STAR):
            return MergeClause(match, MergeAction.UPDATE_ALL, condition)
        assignments = _assignments(c, qualifier, frozenset({"WHEN"}))
        return MergeClause(match, MergeAction.UPDATE, condition, assignments=assignments)
    if c.accept("INSERT"):
        if c.accept_type(TokenType.STAR) or c.accept("BY", "NAME") or c.done() or c.at("WHEN"):
            return MergeClause(match, MergeAction.INSERT_ALL, condition)
        columns = _column_list(c) if c.at_type(TokenType.L_PAREN) else ()
        c.expect("VALUES")
        c.expect_type(TokenType.L_PAREN, "( after VALUES")
        values = [c.expression("a value to insert", comma=True)]
        while c.accept_type(TokenType.COMMA):
            values.append(c.expression("a value to insert", comma=True))
        c.expect_type(TokenType.R_PAREN, ") after the values")
        if columns and len(columns) != len(values):
            raise UserError(f"INSERT lists {len(columns)} columns but {len(values)} values")
        return MergeClause(
            match, MergeAction.INSERT, condition, insert_columns=columns, insert_values=tuple(values)
        )
    if c.at("DO", "NOTHING") or c.at("ERROR"):
        raise UnsupportedError(f"MERGE ... THEN {c.word()} is not supported: leave the clause out")
    raise c.error("UPDATE, DELETE or INSERT after THEN")

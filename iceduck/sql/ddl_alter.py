"""ALTER TABLE: Spark's column changes, DuckDB's spellings of them, and the Iceberg SQL
extensions (docs, "Spark DDL": "ALTER TABLE ... ADD PARTITION FIELD", "WRITE ORDERED BY",
"SET IDENTIFIER FIELDS", "Branching and Tagging DDL").

Grammar after ``ALTER TABLE <name>`` (one action per statement, as in Spark, except the
lists of ``ADD COLUMNS (...)`` and ``DROP COLUMNS a, b``)::

    RENAME TO <name>
    ADD COLUMN[S] [(] path type [NOT NULL] [DEFAULT lit] [COMMENT 'c'] [FIRST | AFTER col], ... [)]
    DROP COLUMN[S] [IF EXISTS] path, ...
    RENAME COLUMN path TO name
    ALTER [COLUMN] path { TYPE type | SET DATA TYPE type | SET NOT NULL | DROP NOT NULL
                        | COMMENT 'c' | FIRST | AFTER col | SET DEFAULT lit }...
    SET TBLPROPERTIES (k = v, ...)        UNSET TBLPROPERTIES [IF EXISTS] (k, ...)
    ADD PARTITION FIELD term [AS name]    DROP PARTITION FIELD term|name
    REPLACE PARTITION FIELD term|name WITH term [AS name]
    WRITE { [LOCALLY] ORDERED BY sort_terms | UNORDERED | DISTRIBUTED BY PARTITION
            [[LOCALLY] ORDERED BY sort_terms] }
    SET IDENTIFIER FIELDS path, ...       DROP IDENTIFIER FIELDS path, ...
    CREATE [OR REPLACE] BRANCH|TAG [IF NOT EXISTS] name  |  REPLACE BRANCH|TAG name
        [AS OF VERSION snapshot_id] [RETAIN n DAYS|HOURS|MINUTES]
        [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n DAYS|HOURS|MINUTES]]   (branches only)
    DROP BRANCH|TAG [IF EXISTS] name

``ALTER COLUMN c SET DEFAULT v`` carries ``v`` as a :class:`iceduck.sql.literals.SqlLiteral`
(the parser does not know the column's type): the operation converts it with
:func:`iceduck.sql.ddl_terms.typed_default` (``ADD COLUMN ... DEFAULT v`` is typed here).

``DROP PARTITION FIELD x`` with a bare one-part name gives ``field_name='x'``: Spark
decides by the schema (a column name means ``identity(x)``, anything else a partition
field name), which the operation does, not the parser.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from iceduck.errors import UnsupportedError, UserError
from iceduck.sql.ddl_terms import (
    column_def,
    column_path,
    default_literal,
    duration_ms,
    partition_term,
    position,
    properties,
    property_keys,
    sort_terms,
    transform_term,
)
from iceduck.sql.ddl_tokens import Cursor
from iceduck.sql.ddl_types import parse_type
from iceduck.sql.statements import (
    AddColumn,
    AddPartitionField,
    AlterAction,
    AlterColumn,
    AlterTable,
    ColumnPath,
    CreateRef,
    DropColumn,
    DropIdentifierFields,
    DropPartitionField,
    DropRef,
    Name,
    PartitionTerm,
    RefKind,
    RenameColumn,
    RenameTable,
    ReplacePartitionField,
    SetIdentifierFields,
    SetProperties,
    UnsetProperties,
    WriteOrder,
    WriteStatement,
)


def alter_table(c: Cursor) -> WriteStatement:
    """The statement after ``ALTER TABLE`` (see the module docstring)."""
    name = c.name()
    if c.accept("RENAME", "TO"):
        return RenameTable(name, c.name("the new table name"))
    ref = _ref_statement(c, name)
    if ref is not None:
        return ref
    return AlterTable(name, _actions(c))


def _actions(c: Cursor) -> tuple[AlterAction, ...]:
    if c.accept("ADD"):
        return _add(c)
    if c.accept("DROP"):
        return _drop(c)
    if c.accept("RENAME", "COLUMN"):
        path = column_path(c)
        c.expect("TO")
        return (RenameColumn(path, c.identifier("the new column name")),)
    if c.accept("ALTER"):
        c.accept("COLUMN")
        return (_alter_column(c),)
    if c.accept("SET", "TBLPROPERTIES"):
        return (SetProperties(properties(c)),)
    if c.accept("UNSET", "TBLPROPERTIES"):
        if_exists = c.accept("IF", "EXISTS")
        return (UnsetProperties(property_keys(c), if_exists),)
    if c.accept("SET", "IDENTIFIER", "FIELDS"):
        return (SetIdentifierFields(_paths(c)),)
    if c.accept("REPLACE", "PARTITION", "FIELD"):
        old = _partition_field_to_drop(c)
        c.expect("WITH")
        return (ReplacePartitionField(old, partition_term(c)),)
    if c.accept("WRITE"):
        return (_write_order(c),)
    for words in (("SET", "LOCATION"), ("SET", "SERDE"), ("REPLACE", "COLUMNS"), ("CHANGE",), ("RECOVER",)):
        if c.at(*words):
            raise UnsupportedError(f"ALTER TABLE ... {' '.join(words)} is not supported")
    raise c.error("an ALTER TABLE action (ADD, DROP, RENAME, ALTER COLUMN, SET, UNSET, WRITE, ...)")


def _add(c: Cursor) -> tuple[AlterAction, ...]:
    if c.accept("PARTITION", "FIELD"):
        return (AddPartitionField(partition_term(c)),)
    if c.word() in ("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
        raise UnsupportedError(f"ALTER TABLE ... ADD {c.word()} is not supported: Iceberg has no constraints")
    if c.at("PARTITION") or c.at("IF", "NOT", "EXISTS", "PARTITION"):
        raise UnsupportedError("ADD PARTITION is Hive syntax: use ADD PARTITION FIELD <transform>")
    if not c.accept("COLUMNS"):
        c.accept("COLUMN")
    if c.at("IF", "NOT", "EXISTS"):
        raise UnsupportedError("ADD COLUMN IF NOT EXISTS is not supported")
    parenthesised = c.accept_type(TokenType.L_PAREN)
    actions = [_add_column(c)]
    while c.accept_type(TokenType.COMMA):
        actions.append(_add_column(c))
    if parenthesised:
        c.expect_type(TokenType.R_PAREN, ") after the new columns")
    return tuple(actions)


def _add_column(c: Cursor) -> AddColumn:
    path = column_path(c)
    column = column_def(c, path[-1])
    return AddColumn(path, column, position(c))


def _drop(c: Cursor) -> tuple[AlterAction, ...]:
    if c.accept("PARTITION", "FIELD"):
        return (_partition_field_to_drop(c),)
    if c.accept("IDENTIFIER", "FIELDS"):
        return (DropIdentifierFields(_paths(c)),)
    if c.word() in ("CONSTRAINT", "PRIMARY", "FOREIGN"):
        raise UnsupportedError(
            f"ALTER TABLE ... DROP {c.word()} is not supported: Iceberg has no constraints"
        )
    if c.at("PARTITION") or c.at("IF", "EXISTS", "PARTITION"):
        raise UnsupportedError(
            "DROP PARTITION is Hive syntax: use DELETE FROM ... WHERE or DROP PARTITION FIELD"
        )
    if not c.accept("COLUMNS"):
        c.accept("COLUMN")
    if_exists = c.accept("IF", "EXISTS")
    return tuple(DropColumn(path, if_exists) for path in _paths(c))


def _paths(c: Cursor) -> tuple[ColumnPath, ...]:
    parenthesised = c.accept_type(TokenType.L_PAREN)
    paths = [column_path(c)]
    while c.accept_type(TokenType.COMMA):
        paths.append(column_path(c))
    if parenthesised:
        c.expect_type(TokenType.R_PAREN, ") after the column names")
    return tuple(paths)


def _partition_field_to_drop(c: Cursor) -> DropPartitionField:
    start = c.i
    transform, source = transform_term(c)
    plain_name = len(source) == 1 and c.i == start + 1
    if plain_name:
        return DropPartitionField(field_name=source[0])
    return DropPartitionField(term=PartitionTerm(transform, source))


def _alter_column(c: Cursor) -> AlterColumn:
    path = column_path(c)
    changes: dict[str, object] = {}

    def put(key: str, value: object) -> None:
        if key in changes:
            raise UserError(f"ALTER COLUMN {'.'.join(path)} changes {key} twice")
        changes[key] = value

    while not c.done():
        if c.accept("TYPE") or c.accept("SET", "DATA", "TYPE"):
            put("type", parse_type(c))
        elif c.accept("SET", "NOT", "NULL"):
            put("required", True)
        elif c.accept("DROP", "NOT", "NULL"):
            put("required", False)
        elif c.accept("COMMENT"):
            put("comment", c.string("the column comment"))
        elif c.accept("SET", "DEFAULT"):
            put("default", default_literal(c, ".".join(path)))
        elif c.at("DROP", "DEFAULT"):
            raise UnsupportedError("ALTER COLUMN ... DROP DEFAULT is not supported")
        elif c.at("FIRST") or c.at("AFTER"):
            put("position", position(c))
        else:
            raise c.error("TYPE, SET/DROP NOT NULL, COMMENT, FIRST, AFTER or SET DEFAULT")
    if not changes:
        raise c.error("a change after ALTER COLUMN")
    has_default = "default" in changes
    return AlterColumn(path, has_default=has_default, **changes)  # type: ignore[arg-type]


def _write_order(c: Cursor) -> WriteOrder:
    if c.accept("UNORDERED"):
        return WriteOrder()
    distributed = c.accept("DISTRIBUTED", "BY", "PARTITION")
    locally = c.accept("LOCALLY")
    if c.accept("ORDERED", "BY"):
        return WriteOrder(sort_terms(c), distributed, locally)
    if distributed and not locally:
        return WriteOrder((), True, False)
    raise c.error("ORDERED BY, LOCALLY ORDERED BY, UNORDERED or DISTRIBUTED BY PARTITION")


# -- branches and tags --------------------------------------------------------------------


def _ref_statement(c: Cursor, table: Name) -> WriteStatement | None:
    if c.accept("DROP", "BRANCH") or c.accept("DROP", "TAG"):
        kind = RefKind.BRANCH if c.word(-1) == "BRANCH" else RefKind.TAG
        if_exists = c.accept("IF", "EXISTS")
        return DropRef(table, kind, c.identifier("a branch or tag name"), if_exists)
    or_replace = replace = if_not_exists = False
    if c.accept("CREATE", "OR", "REPLACE"):
        or_replace = True
    elif c.at("CREATE", "BRANCH") or c.at("CREATE", "TAG"):
        c.next()
    elif c.at("REPLACE", "BRANCH") or c.at("REPLACE", "TAG"):
        c.next()
        replace = True
    else:
        return None
    kind_word = c.word()
    if kind_word not in ("BRANCH", "TAG"):
        raise c.error("BRANCH or TAG")
    c.next()
    kind = RefKind.BRANCH if kind_word == "BRANCH" else RefKind.TAG
    if_not_exists = c.accept("IF", "NOT", "EXISTS")
    if if_not_exists and (or_replace or replace):
        raise UserError(f"IF NOT EXISTS cannot be combined with REPLACE {kind_word}")
    ref_name = c.identifier(f"the {kind.value} name")
    snapshot_id: int | None = None
    from_ref: str | None = None
    if c.accept("AS", "OF", "VERSION"):
        token = c.peek()
        if token is not None and token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
            from_ref = c.string()
        else:
            snapshot_id = c.integer("a snapshot id after AS OF VERSION")
    max_ref_age = duration_ms(c, "retention") if c.accept("RETAIN") else None
    min_snapshots = max_snapshot_age = None
    if c.accept("WITH", "SNAPSHOT", "RETENTION"):
        if kind is RefKind.TAG:
            raise UserError("WITH SNAPSHOT RETENTION applies to branches, not tags")
        if c.at_type(TokenType.NUMBER) and c.word(1) == "SNAPSHOTS":
            min_snapshots = c.integer()
            c.next()
        if c.at_type(TokenType.NUMBER):
            max_snapshot_age = duration_ms(c, "snapshot age")
        if min_snapshots is None and max_snapshot_age is None:
            raise c.error("n SNAPSHOTS and/or n DAYS|HOURS|MINUTES")
    return CreateRef(
        table,
        kind,
        ref_name,
        snapshot_id=snapshot_id,
        from_ref=from_ref,
        or_replace=or_replace,
        replace=replace,
        if_not_exists=if_not_exists,
        max_ref_age_ms=max_ref_age,
        min_snapshots_to_keep=min_snapshots,
        max_snapshot_age_ms=max_snapshot_age,
    )

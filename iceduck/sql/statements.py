"""Write statements as plain data: what :mod:`iceduck.sql.ddl` parses DDL and DML into.

The SQL layer (the only sqlglot importer) turns the text of a CREATE/ALTER/INSERT/
DELETE/... statement into one of these frozen dataclasses; the table operations of
:mod:`iceduck.ops` execute them and never see sqlglot. Expressions that DuckDB evaluates
(a SET value, a query) travel as *DuckDB SQL text* in the user's spelling, with
``$1``-style parameters as in :mod:`iceduck.sql.parse`, and may still name Iceberg
tables: the session resolves those when it runs the text. The conditions iceduck reads
too -- a DELETE's or UPDATE's WHERE, a MERGE's ON -- are a
:class:`~iceduck.sql.condition.Condition`: that text with its parsed tree, which the SQL
layer turns into an Iceberg row filter (:func:`iceduck.sql.filters.row_filter`).

Names are tuples of their dotted parts exactly as written (``("db", "t",
"branch_dev")``); which parts name the table and which a branch is decided by the
catalog, not the parser. Column paths are tuples too (``("point", "x")``).

Types in :class:`ColumnDef` are Iceberg types whose nested field ids are placeholders
(numbered in parse order from 1): table creation and ``ADD COLUMN`` assign real ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import Transform
from iceduck.spec.types import IcebergType
from iceduck.sql.condition import Condition
from iceduck.sql.view_statements import (
    AlterViewAs,
    CreateView,
    DropCatalogView,
    RenameView,
    SetViewProperties,
    UnsetViewProperties,
)

Name = tuple[str, ...]
ColumnPath = tuple[str, ...]


# -- pieces -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnDef:
    """A column of CREATE TABLE or ADD COLUMN."""

    name: str
    type: IcebergType
    required: bool = False
    comment: str | None = None
    #: ``DEFAULT <literal>`` as a Python value of the column's type (v3 ``initial-default``
    #: and ``write-default``); None when absent
    default: Any = None
    has_default: bool = False


@dataclass(frozen=True)
class PartitionTerm:
    """``bucket(16, id)``, ``days(ts)``, ``truncate(4, s)``, ``id``... of PARTITIONED BY or
    ADD/DROP/REPLACE PARTITION FIELD; ``name`` is the ``AS alias`` when given."""

    transform: Transform
    source: ColumnPath
    name: str | None = None


@dataclass(frozen=True)
class SortTerm:
    """A term of WRITE ORDERED BY / CREATE TABLE ... ORDERED BY (Spark's defaults:
    ASC with NULLS FIRST, DESC with NULLS LAST)."""

    transform: Transform
    source: ColumnPath
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder = NullOrder.NULLS_FIRST


class Position(Enum):
    FIRST = "first"
    AFTER = "after"


@dataclass(frozen=True)
class ColumnPosition:
    """``FIRST`` or ``AFTER <sibling>`` of ADD COLUMN / ALTER COLUMN."""

    kind: Position
    after: str | None = None


# -- namespaces and tables ------------------------------------------------------------------


@dataclass(frozen=True)
class CreateNamespace:
    namespace: Name
    if_not_exists: bool = False
    properties: dict[str, str] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class DropNamespace:
    namespace: Name
    if_exists: bool = False
    cascade: bool = False


@dataclass(frozen=True)
class CreateTable:
    """CREATE [OR REPLACE] TABLE / REPLACE TABLE, with columns or ``AS <query>``.

    ``properties`` holds TBLPROPERTIES (``format-version`` among them); ``using`` is the
    USING provider as written (only ``iceberg`` or absent is accepted by the parser).
    """

    name: Name
    columns: tuple[ColumnDef, ...] = ()
    partition_by: tuple[PartitionTerm, ...] = ()
    sort_by: tuple[SortTerm, ...] = ()
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    comment: str | None = None
    location: str | None = None
    if_not_exists: bool = False
    or_replace: bool = False
    #: REPLACE TABLE (the table must exist)
    replace: bool = False
    #: DuckDB SQL text of the query of CREATE TABLE ... AS
    as_query: str | None = None


@dataclass(frozen=True)
class DropTable:
    name: Name
    if_exists: bool = False
    purge: bool = False


@dataclass(frozen=True)
class RenameTable:
    name: Name
    new_name: Name


# -- data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Insert:
    """INSERT INTO / INSERT OVERWRITE.

    ``query`` is the DuckDB SQL text producing the rows (a SELECT, a VALUES list, ...).
    ``columns`` is the column list when given (other columns get their write default or
    null). ``static_partition`` maps the columns named in ``PARTITION (c = v, ...)`` to
    DuckDB SQL text of their values; with ``overwrite`` and no static partition the
    overwrite is dynamic (replaces the partitions the rows fall in). ``by_name`` is
    DuckDB's ``INSERT INTO t BY NAME``. ``replace`` is ``INSERT OR REPLACE INTO``: an
    upsert by the table's identifier fields (:mod:`iceduck.ops.upsert`).
    """

    name: Name
    query: str
    columns: tuple[str, ...] | None = None
    overwrite: bool = False
    static_partition: dict[str, str] | None = field(default=None, hash=False)
    by_name: bool = False
    replace: bool = False


@dataclass(frozen=True)
class Delete:
    """DELETE FROM name [AS alias] [WHERE condition]."""

    name: Name
    alias: str | None = None
    where: Condition | None = None


@dataclass(frozen=True)
class Update:
    """UPDATE name [AS alias] SET path = expr, ... [FROM ...] [WHERE condition]."""

    name: Name
    assignments: tuple[tuple[ColumnPath, str], ...]
    alias: str | None = None
    where: Condition | None = None
    #: DuckDB SQL text of the FROM clause's relations (``UPDATE ... FROM``), if any
    from_: str | None = None


class MergeAction(Enum):
    UPDATE = "update"
    UPDATE_ALL = "update *"
    DELETE = "delete"
    INSERT = "insert"
    INSERT_ALL = "insert *"


class MergeMatch(Enum):
    MATCHED = "matched"
    NOT_MATCHED = "not matched"  # by target: the source row has no target row
    NOT_MATCHED_BY_SOURCE = "not matched by source"


@dataclass(frozen=True)
class MergeClause:
    """One ``WHEN [NOT] MATCHED [BY SOURCE] [AND cond] THEN action`` clause.

    UPDATE: ``assignments`` (target column path, SQL text over target and source);
    INSERT: ``insert_columns`` and ``insert_values`` (SQL text over the source).
    """

    match: MergeMatch
    action: MergeAction
    condition: str | None = None
    assignments: tuple[tuple[ColumnPath, str], ...] = ()
    insert_columns: tuple[str, ...] = ()
    insert_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class Merge:
    """MERGE INTO target [AS t] USING source [AS s] ON cond WHEN ...

    ``source`` is DuckDB SQL text of the source relation (a table name or ``(query)``),
    without its alias.
    """

    name: Name
    source: str
    on: Condition
    clauses: tuple[MergeClause, ...]
    alias: str | None = None
    source_alias: str | None = None


# -- ALTER TABLE ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AddColumn:
    path: ColumnPath  # parent path + the new name; () parent means top level
    column: ColumnDef
    position: ColumnPosition | None = None


@dataclass(frozen=True)
class DropColumn:
    path: ColumnPath
    if_exists: bool = False


@dataclass(frozen=True)
class RenameColumn:
    path: ColumnPath
    new_name: str


@dataclass(frozen=True)
class AlterColumn:
    """ALTER COLUMN path [TYPE t] [SET/DROP NOT NULL] [COMMENT c] [FIRST | AFTER x]
    (Spark accepts one change per clause; several fields may be set when a dialect allows)."""

    path: ColumnPath
    type: IcebergType | None = None
    required: bool | None = None
    comment: str | None = None
    position: ColumnPosition | None = None
    #: ``ALTER COLUMN c SET DEFAULT literal`` (v3 write-default)
    default: Any = None
    has_default: bool = False


@dataclass(frozen=True)
class AddPartitionField:
    term: PartitionTerm


@dataclass(frozen=True)
class DropPartitionField:
    """DROP PARTITION FIELD by term (``bucket(16, id)``) or by name (``shard``): exactly
    one of ``term``/``field_name`` is set."""

    term: PartitionTerm | None = None
    field_name: str | None = None


@dataclass(frozen=True)
class ReplacePartitionField:
    old: DropPartitionField
    new: PartitionTerm


@dataclass(frozen=True)
class WriteOrder:
    """WRITE [LOCALLY] ORDERED BY terms / WRITE UNORDERED (empty ``terms``) /
    WRITE DISTRIBUTED BY PARTITION [LOCALLY ORDERED BY ...]."""

    terms: tuple[SortTerm, ...] = ()
    distributed_by_partition: bool = False
    locally: bool = False


@dataclass(frozen=True)
class SetIdentifierFields:
    columns: tuple[ColumnPath, ...]


@dataclass(frozen=True)
class DropIdentifierFields:
    columns: tuple[ColumnPath, ...]


@dataclass(frozen=True)
class SetProperties:
    properties: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class UnsetProperties:
    keys: tuple[str, ...]
    if_exists: bool = False


AlterAction = (
    AddColumn
    | DropColumn
    | RenameColumn
    | AlterColumn
    | AddPartitionField
    | DropPartitionField
    | ReplacePartitionField
    | WriteOrder
    | SetIdentifierFields
    | DropIdentifierFields
    | SetProperties
    | UnsetProperties
)


@dataclass(frozen=True)
class AlterTable:
    """ALTER TABLE name <action>[, <action>...] (Spark: one action per statement, except
    ADD COLUMNS (a, b) which is several AddColumn actions)."""

    name: Name
    actions: tuple[AlterAction, ...]


# -- branches and tags ----------------------------------------------------------------------


class RefKind(Enum):
    BRANCH = "branch"
    TAG = "tag"


@dataclass(frozen=True)
class CreateRef:
    """ALTER TABLE t CREATE [OR REPLACE] BRANCH|TAG [IF NOT EXISTS] name
    [AS OF VERSION n] [RETAIN n DAYS|HOURS|MINUTES] [WITH SNAPSHOT RETENTION
    [n SNAPSHOTS] [n DAYS|...]] -- and REPLACE BRANCH|TAG (must exist).

    Durations are already in milliseconds. ``snapshot_id`` None means the current one.
    """

    table: Name
    kind: RefKind
    ref_name: str
    snapshot_id: int | None = None
    #: ``AS OF VERSION 'other_ref'`` names a ref instead of an id
    from_ref: str | None = None
    or_replace: bool = False
    replace: bool = False
    if_not_exists: bool = False
    max_ref_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None


@dataclass(frozen=True)
class DropRef:
    table: Name
    kind: RefKind
    ref_name: str
    if_exists: bool = False


WriteStatement = (
    CreateNamespace
    | DropNamespace
    | CreateTable
    | DropTable
    | RenameTable
    | Insert
    | Delete
    | Update
    | Merge
    | AlterTable
    | CreateRef
    | DropRef
    | CreateView
    | AlterViewAs
    | SetViewProperties
    | UnsetViewProperties
    | RenameView
    | DropCatalogView
)


@dataclass(frozen=True)
class ExplainWrite:
    """``EXPLAIN INSERT|DELETE|UPDATE|MERGE ...``: which write the statement would do
    (append, upsert, overwrite, copy-on-write or merge-on-read), without doing it."""

    statement: Insert | Delete | Update | Merge

"""ALTER TABLE, the Iceberg SQL extensions and branch/tag DDL (iceduck.sql.ddl_alter)."""

from __future__ import annotations

import pytest

from iceduck.errors import UnsupportedError, UserError
from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import BucketTransform, DayTransform, IdentityTransform, TruncateTransform
from iceduck.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)
from iceduck.sql.ddl import parse_write
from iceduck.sql.ddl_terms import typed_default
from iceduck.sql.literals import Kind, SqlLiteral
from iceduck.sql.statements import (
    AddColumn,
    AddPartitionField,
    AlterAction,
    AlterColumn,
    AlterTable,
    ColumnDef,
    ColumnPosition,
    CreateRef,
    DropColumn,
    DropIdentifierFields,
    DropPartitionField,
    DropRef,
    PartitionTerm,
    Position,
    RefKind,
    RenameColumn,
    RenameTable,
    ReplacePartitionField,
    SetIdentifierFields,
    SetProperties,
    SortTerm,
    UnsetProperties,
    WriteOrder,
)

DAY_MS = 86_400_000


def actions(sql: str) -> tuple[AlterAction, ...]:
    statement = parse_write(sql)
    assert isinstance(statement, AlterTable)
    assert statement.name == ("db", "t")
    return statement.actions


def test_rename_table() -> None:
    assert parse_write("ALTER TABLE db.t RENAME TO db.u") == RenameTable(("db", "t"), ("db", "u"))
    assert parse_write("ALTER TABLE db.t RENAME TO u") == RenameTable(("db", "t"), ("u",))


def test_add_columns() -> None:
    assert actions("ALTER TABLE db.t ADD COLUMNS (new_column string COMMENT 'docs', n bigint NOT NULL)") == (
        AddColumn(("new_column",), ColumnDef("new_column", StringType(), comment="docs")),
        AddColumn(("n",), ColumnDef("n", LongType(), required=True)),
    )
    assert actions("ALTER TABLE db.t ADD COLUMN point struct<x: double, y: double>") == (
        AddColumn(
            ("point",),
            ColumnDef(
                "point", StructType((NestedField(1, "x", DoubleType()), NestedField(2, "y", DoubleType())))
            ),
        ),
    )
    assert actions("ALTER TABLE db.t ADD COLUMN point.z double FIRST") == (
        AddColumn(("point", "z"), ColumnDef("z", DoubleType()), ColumnPosition(Position.FIRST)),
    )
    assert actions("ALTER TABLE db.t ADD COLUMN points.element.z double AFTER y") == (
        AddColumn(
            ("points", "element", "z"), ColumnDef("z", DoubleType()), ColumnPosition(Position.AFTER, "y")
        ),
    )
    # DuckDB: no COLUMN keyword needed, INT[] lists; v3 defaults typed by the new column
    assert actions("ALTER TABLE db.t ADD c INT[] DEFAULT NULL") == (
        AddColumn(("c",), ColumnDef("c", ListType(1, IntegerType()), has_default=True)),
    )
    assert actions("ALTER TABLE db.t ADD COLUMN c int DEFAULT 7") == (
        AddColumn(("c",), ColumnDef("c", IntegerType(), default=7, has_default=True)),
    )


def test_timestamp_in_alter_follows_the_flavour_rule() -> None:
    duck = actions("ALTER TABLE db.t ADD COLUMN ts timestamp")[0]
    spark = actions("ALTER TABLE db.t ADD COLUMNS (ts timestamp)")[0]
    quoted = actions("ALTER TABLE db.t ADD COLUMN `ts` timestamp")[0]
    assert isinstance(duck, AddColumn) and duck.column.type == TimestampType()
    assert isinstance(spark, AddColumn) and spark.column.type == TimestamptzType()
    assert isinstance(quoted, AddColumn) and quoted.column.type == TimestamptzType()


def test_drop_and_rename_columns() -> None:
    assert actions("ALTER TABLE db.t DROP COLUMN id") == (DropColumn(("id",)),)
    assert actions("ALTER TABLE db.t DROP COLUMN point.z") == (DropColumn(("point", "z")),)
    assert actions("ALTER TABLE db.t DROP COLUMNS IF EXISTS a, b") == (
        DropColumn(("a",), True),
        DropColumn(("b",), True),
    )
    assert actions("ALTER TABLE db.t DROP COLUMNS (a, b)") == (DropColumn(("a",)), DropColumn(("b",)))
    assert actions("ALTER TABLE db.t DROP x") == (DropColumn(("x",)),)
    assert actions("ALTER TABLE db.t RENAME COLUMN location.lat TO latitude") == (
        RenameColumn(("location", "lat"), "latitude"),
    )


def test_alter_column() -> None:
    assert actions(
        "ALTER TABLE db.t ALTER COLUMN measurement TYPE double COMMENT 'unit is bytes per second'"
    ) == (AlterColumn(("measurement",), type=DoubleType(), comment="unit is bytes per second"),)
    assert actions("ALTER TABLE db.t ALTER COLUMN id SET NOT NULL") == (AlterColumn(("id",), required=True),)
    assert actions("ALTER TABLE db.t ALTER COLUMN id DROP NOT NULL") == (
        AlterColumn(("id",), required=False),
    )
    assert actions("ALTER TABLE db.t ALTER COLUMN col FIRST") == (
        AlterColumn(("col",), position=ColumnPosition(Position.FIRST)),
    )
    assert actions("ALTER TABLE db.t ALTER COLUMN nested.col AFTER other_col") == (
        AlterColumn(("nested", "col"), position=ColumnPosition(Position.AFTER, "other_col")),
    )
    assert actions("ALTER TABLE db.t ALTER c SET DATA TYPE BIGINT") == (AlterColumn(("c",), type=LongType()),)
    assert actions("ALTER TABLE db.t ALTER COLUMN c SET DEFAULT -3") == (
        AlterColumn(("c",), default=SqlLiteral(Kind.INTEGER, -3), has_default=True),
    )


def test_set_default_literals_are_typed_by_the_operation() -> None:
    (action,) = actions("ALTER TABLE db.t ALTER COLUMN c SET DEFAULT '2024-01-01'")
    assert isinstance(action, AlterColumn) and action.has_default
    assert typed_default(action.default, "c", TimestampType()) == 1_704_067_200_000_000
    with pytest.raises(UserError, match="does not fit column c of type int"):
        typed_default(action.default, "c", IntegerType())


def test_properties() -> None:
    assert actions("ALTER TABLE db.t SET TBLPROPERTIES ('read.split.target-size'='268435456', a = true)") == (
        SetProperties({"read.split.target-size": "268435456", "a": "true"}),
    )
    assert actions("ALTER TABLE db.t UNSET TBLPROPERTIES ('a', b.c)") == (UnsetProperties(("a", "b.c")),)
    assert actions("ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('a')") == (UnsetProperties(("a",), True),)


def test_partition_fields() -> None:
    assert actions("ALTER TABLE db.t ADD PARTITION FIELD bucket(16, id) AS shard") == (
        AddPartitionField(PartitionTerm(BucketTransform(16), ("id",), "shard")),
    )
    assert actions("ALTER TABLE db.t ADD PARTITION FIELD truncate(4, data)") == (
        AddPartitionField(PartitionTerm(TruncateTransform(4), ("data",))),
    )
    assert actions("ALTER TABLE db.t ADD PARTITION FIELD catalog") == (
        AddPartitionField(PartitionTerm(IdentityTransform(), ("catalog",))),
    )
    assert actions("ALTER TABLE db.t DROP PARTITION FIELD shard") == (DropPartitionField(field_name="shard"),)
    assert actions("ALTER TABLE db.t DROP PARTITION FIELD days(ts)") == (
        DropPartitionField(term=PartitionTerm(DayTransform(), ("ts",))),
    )
    assert actions("ALTER TABLE db.t DROP PARTITION FIELD s.x") == (
        DropPartitionField(term=PartitionTerm(IdentityTransform(), ("s", "x"))),
    )
    assert actions("ALTER TABLE db.t REPLACE PARTITION FIELD ts_day WITH days(ts) AS day_of_ts") == (
        ReplacePartitionField(
            DropPartitionField(field_name="ts_day"), PartitionTerm(DayTransform(), ("ts",), "day_of_ts")
        ),
    )


def test_write_order() -> None:
    assert actions("ALTER TABLE db.t WRITE ORDERED BY category ASC NULLS LAST, id DESC") == (
        WriteOrder(
            (
                SortTerm(IdentityTransform(), ("category",), SortDirection.ASC, NullOrder.NULLS_LAST),
                SortTerm(IdentityTransform(), ("id",), SortDirection.DESC, NullOrder.NULLS_LAST),
            )
        ),
    )
    assert actions("ALTER TABLE db.t WRITE LOCALLY ORDERED BY bucket(4, id)") == (
        WriteOrder((SortTerm(BucketTransform(4), ("id",)),), locally=True),
    )
    assert actions(
        "ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY id DESC NULLS FIRST"
    ) == (
        WriteOrder(
            (SortTerm(IdentityTransform(), ("id",), SortDirection.DESC, NullOrder.NULLS_FIRST),), True, True
        ),
    )
    assert actions("ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION") == (WriteOrder((), True),)
    assert actions("ALTER TABLE db.t WRITE UNORDERED") == (WriteOrder(),)


def test_identifier_fields() -> None:
    assert actions("ALTER TABLE db.t SET IDENTIFIER FIELDS id, data") == (
        SetIdentifierFields((("id",), ("data",))),
    )
    assert actions("ALTER TABLE db.t SET IDENTIFIER FIELDS (id, s.x)") == (
        SetIdentifierFields((("id",), ("s", "x"))),
    )
    assert actions("ALTER TABLE db.t DROP IDENTIFIER FIELDS data") == (DropIdentifierFields((("data",),)),)


def test_branches_and_tags() -> None:
    t = ("db", "t")
    assert parse_write(
        "ALTER TABLE db.t CREATE BRANCH `audit-branch` AS OF VERSION 1234 RETAIN 30 DAYS"
    ) == CreateRef(t, RefKind.BRANCH, "audit-branch", snapshot_id=1234, max_ref_age_ms=30 * DAY_MS)
    assert parse_write(
        "ALTER TABLE db.t CREATE BRANCH IF NOT EXISTS b WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS"
    ) == CreateRef(
        t, RefKind.BRANCH, "b", if_not_exists=True, min_snapshots_to_keep=3, max_snapshot_age_ms=2 * DAY_MS
    )
    assert parse_write(
        "ALTER TABLE db.t CREATE OR REPLACE BRANCH b WITH SNAPSHOT RETENTION 6 HOURS"
    ) == CreateRef(t, RefKind.BRANCH, "b", or_replace=True, max_snapshot_age_ms=6 * 3_600_000)
    assert parse_write("ALTER TABLE db.t CREATE BRANCH b WITH SNAPSHOT RETENTION 5 SNAPSHOTS") == CreateRef(
        t, RefKind.BRANCH, "b", min_snapshots_to_keep=5
    )
    assert parse_write("ALTER TABLE db.t REPLACE BRANCH b AS OF VERSION 4567 RETAIN 60 MINUTES") == CreateRef(
        t, RefKind.BRANCH, "b", snapshot_id=4567, replace=True, max_ref_age_ms=60 * 60_000
    )
    assert parse_write(
        "ALTER TABLE db.t CREATE TAG `historical-tag` AS OF VERSION 1234 RETAIN 365 DAYS"
    ) == CreateRef(t, RefKind.TAG, "historical-tag", snapshot_id=1234, max_ref_age_ms=365 * DAY_MS)
    assert parse_write("ALTER TABLE db.t CREATE TAG v1 AS OF VERSION 'main'") == CreateRef(
        t, RefKind.TAG, "v1", from_ref="main"
    )
    assert parse_write("ALTER TABLE db.t REPLACE TAG v1") == CreateRef(t, RefKind.TAG, "v1", replace=True)
    assert parse_write("ALTER TABLE db.t DROP BRANCH `audit-branch`") == DropRef(
        t, RefKind.BRANCH, "audit-branch"
    )
    assert parse_write("ALTER TABLE db.t DROP TAG IF EXISTS v1") == DropRef(t, RefKind.TAG, "v1", True)


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("ALTER TABLE db.t ADD CONSTRAINT c CHECK (a > 0)", UnsupportedError, "ADD CONSTRAINT"),
        ("ALTER TABLE db.t ADD PRIMARY KEY (a)", UnsupportedError, "ADD PRIMARY"),
        ("ALTER TABLE db.t DROP CONSTRAINT c", UnsupportedError, "DROP CONSTRAINT"),
        ("ALTER TABLE db.t ADD PARTITION (p = 1)", UnsupportedError, "ADD PARTITION FIELD"),
        ("ALTER TABLE db.t DROP PARTITION (p = 1)", UnsupportedError, "Hive syntax"),
        ("ALTER TABLE db.t SET LOCATION '/x'", UnsupportedError, "SET LOCATION"),
        ("ALTER TABLE db.t ADD COLUMN IF NOT EXISTS c int", UnsupportedError, "IF NOT EXISTS"),
        ("ALTER TABLE db.t ALTER COLUMN c DROP DEFAULT", UnsupportedError, "DROP DEFAULT"),
        ("ALTER TABLE db.t ALTER COLUMN c", UserError, "a change after ALTER COLUMN"),
        ("ALTER TABLE db.t ALTER COLUMN c TYPE int TYPE bigint", UserError, "changes type twice"),
        ("ALTER TABLE db.t ALTER COLUMN c TYPE nope", UserError, "unknown type 'nope'"),
        ("ALTER TABLE db.t ADD COLUMN c", UserError, "expected a column type"),
        ("ALTER TABLE db.t ADD PARTITION FIELD bucket(id)", UserError, "bucket takes two arguments"),
        ("ALTER TABLE db.t ADD PARTITION FIELD months(ts, 2)", UserError, "months takes one argument"),
        (
            "ALTER TABLE db.t CREATE TAG v RETAIN 1 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
            UserError,
            "not tags",
        ),
        ("ALTER TABLE db.t CREATE BRANCH b RETAIN 3 WEEKS", UserError, "DAYS, HOURS or MINUTES"),
        ("ALTER TABLE db.t CREATE BRANCH b AS OF VERSION x", UserError, "snapshot id"),
        ("ALTER TABLE db.t CREATE BRANCH b WITH SNAPSHOT RETENTION", UserError, "SNAPSHOTS"),
        ("ALTER TABLE db.t CREATE OR REPLACE BRANCH IF NOT EXISTS b", UserError, "cannot be combined"),
        ("ALTER TABLE db.t WRITE SORTED BY x", UserError, "ORDERED BY"),
        ("ALTER TABLE db.t FROBNICATE", UserError, "an ALTER TABLE action"),
        ("ALTER NAMESPACE db SET PROPERTIES ('a' = 'b')", UnsupportedError, "only ALTER TABLE"),
    ],
)
def test_errors(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_write(sql)

"""Spark's view DDL read by the write grammar (:mod:`iceduck.sql.ddl_views`)."""

from __future__ import annotations

from iceduck.sql.classify import Show, classify
from iceduck.sql.view_statements import (
    AlterViewAs,
    CreateView,
    DropCatalogView,
    RenameView,
    SetViewProperties,
    UnsetViewProperties,
    ViewColumn,
)


def test_create_view_with_every_clause() -> None:
    statement = classify(
        "CREATE OR REPLACE VIEW ns.v (a COMMENT 'the a', b) TBLPROPERTIES ('k' = 'v') COMMENT 'c' "
        "AS SELECT 1, 2;"
    )
    assert statement == CreateView(
        ("ns", "v"),
        "SELECT 1, 2",
        (ViewColumn("a", "the a"), ViewColumn("b")),
        "c",
        {"k": "v"},
        or_replace=True,
    )
    assert classify(
        "CREATE VIEW IF NOT EXISTS iceduck.ns.v AS WITH c AS (SELECT 1) SELECT * FROM c"
    ) == CreateView(("iceduck", "ns", "v"), "WITH c AS (SELECT 1) SELECT * FROM c", if_not_exists=True)


def test_alter_drop_and_show() -> None:
    assert classify("ALTER VIEW ns.v AS SELECT 2") == AlterViewAs(("ns", "v"), "SELECT 2")
    assert classify("ALTER VIEW ns.v SET TBLPROPERTIES ('a' = '1')") == SetViewProperties(
        ("ns", "v"), {"a": "1"}
    )
    assert classify("ALTER VIEW ns.v UNSET TBLPROPERTIES IF EXISTS ('a', 'b')") == UnsetViewProperties(
        ("ns", "v"), ("a", "b"), if_exists=True
    )
    assert classify("ALTER VIEW ns.v RENAME TO ns.w") == RenameView(("ns", "v"), ("ns", "w"))
    assert classify("DROP VIEW IF EXISTS ns.v") == DropCatalogView(("ns", "v"), if_exists=True)
    assert classify("SHOW VIEWS IN ns") == Show("VIEWS", ("ns",))
    assert classify("show views") == Show("VIEWS")

"""Which table operation runs which write statement.

A dispatch table from statement class to the operation executing it (sqlglot's habit:
dispatch tables rather than ``isinstance`` ladders). Operations are imported when first
used, so a session that only reads never loads the writers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from iceduck.ops.context import OpContext, OpResult
from iceduck.sql import statements as st

#: statement class -> (module under iceduck.ops, function)
OPERATIONS: dict[type, tuple[str, str]] = {
    st.CreateNamespace: ("ddl", "create_namespace"),
    st.DropNamespace: ("ddl", "drop_namespace"),
    st.CreateTable: ("ddl", "create_table"),
    st.DropTable: ("ddl", "drop_table"),
    st.RenameTable: ("ddl", "rename_table"),
    st.AlterTable: ("alter", "alter_table"),
    st.CreateRef: ("refs", "create_ref"),
    st.DropRef: ("refs", "drop_ref"),
    st.Insert: ("insert", "insert"),
    st.Delete: ("row_delete", "delete"),
    st.Update: ("update", "update"),
    st.Merge: ("merge", "merge"),
    st.CreateView: ("views", "create_view"),
    st.AlterViewAs: ("views", "alter_view_as"),
    st.SetViewProperties: ("views", "set_properties"),
    st.UnsetViewProperties: ("views", "unset_properties"),
    st.RenameView: ("views", "rename_view"),
    st.DropCatalogView: ("views", "drop_view"),
}


def operation(statement: Any) -> Callable[[OpContext, Any], OpResult]:
    """The function executing ``statement``."""
    module, name = OPERATIONS[type(statement)]
    return getattr(importlib.import_module(f"iceduck.ops.{module}"), name)


def execute(ctx: OpContext, statement: Any) -> OpResult:
    """Run one write statement."""
    return operation(statement)(ctx, statement)

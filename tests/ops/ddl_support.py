"""Running DDL operations on a real warehouse: a Session over a temporary SQLite catalog,
and the OpContext the session itself would hand an operation (same catalog, manifest
cache, DuckDB cursor, query preparation and name resolution)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from iceduck.ops import dispatch
from iceduck.ops.context import OpContext, OpResult
from iceduck.session.session import Session
from iceduck.spec.types import IcebergType
from iceduck.sql import statements as st


def op_context(session: Session, params: Any = None) -> OpContext:
    """The context the session builds for one statement, on a fresh DuckDB cursor."""
    return session.op_context(session.database.cursor(), params)


def run(session: Session, statement: Any, params: Any = None) -> OpResult:
    """Execute one write statement the way the session's dispatch does."""
    return dispatch.execute(op_context(session, params), statement)


def rows(session: Session, sql: str) -> list[tuple[Any, ...]]:
    return session.execute(sql).fetchall()


def col(name: str, t: IcebergType, required: bool = False, comment: str | None = None) -> st.ColumnDef:
    return st.ColumnDef(name, t, required, comment)


def name(dotted: str) -> tuple[str, ...]:
    return tuple(dotted.split("."))


def metadata_files(table_location: str) -> list[Path]:
    return sorted(Path(table_location.removeprefix("file:"), "metadata").glob("*.metadata.json"))

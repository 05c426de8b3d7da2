"""The statements on Iceberg views (Spark's view DDL), as :mod:`iceduck.sql.ddl_views` reads them.

A view kept in the catalog, shared with Spark and any engine reading Iceberg views, as
opposed to a session's own views (:mod:`iceduck.sql.session_statements`): which of the two
a ``CREATE VIEW`` makes follows the rule of tables. A name of two parts or more, or a
one-part name while a namespace is in use (``USE ns``), names a catalog view; a one-part
name with no namespace in use, and ``CREATE TEMPORARY VIEW``, a session view.

Plain data, no parser here, so :mod:`iceduck.sql.statements` can list them among the write
statements without importing the grammar.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: a dotted name as written
Name = tuple[str, ...]

#: ``TBLPROPERTIES ('iceduck.spark-representation' = 'false')``: write the ``duckdb``
#: representation only (a query sqlglot cannot write in Spark's dialect faithfully)
SPARK_REPRESENTATION = "iceduck.spark-representation"


@dataclass(frozen=True)
class ViewColumn:
    """One name of a view's column list (``(id, total COMMENT 'in euros')``)."""

    name: str
    comment: str | None = None


@dataclass(frozen=True)
class CreateView:
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] name [(columns)] [COMMENT c]
    [TBLPROPERTIES (...)] AS query``; ``query`` is the text after ``AS``, as written."""

    name: Name
    query: str
    columns: tuple[ViewColumn, ...] = ()
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict, hash=False)
    or_replace: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class AlterViewAs:
    """``ALTER VIEW name AS query``: a new version of the view, its properties kept."""

    name: Name
    query: str


@dataclass(frozen=True)
class SetViewProperties:
    """``ALTER VIEW name SET TBLPROPERTIES (...)``."""

    name: Name
    properties: dict[str, str] = field(hash=False)


@dataclass(frozen=True)
class UnsetViewProperties:
    """``ALTER VIEW name UNSET TBLPROPERTIES [IF EXISTS] (...)``."""

    name: Name
    keys: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class RenameView:
    """``ALTER VIEW name RENAME TO new_name``."""

    name: Name
    new_name: Name


@dataclass(frozen=True)
class DropCatalogView:
    """``DROP VIEW [IF EXISTS] name`` of a catalog view."""

    name: Name
    if_exists: bool = False


@dataclass(frozen=True)
class ShowViews:
    """``SHOW VIEWS [IN|FROM ns]``: Spark's columns ``namespace``, ``viewName``,
    ``isTemporary`` (the session's views too, as Spark lists its temporary views)."""

    namespace: Name | None = None


#: the view statements that change the catalog
ViewStatement = (
    CreateView | AlterViewAs | SetViewProperties | UnsetViewProperties | RenameView | DropCatalogView
)

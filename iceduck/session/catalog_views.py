"""The catalog's views a statement reads: each use replaced by the view's query.

A reference that names no table but a view of the catalog (tables and views share one
namespace of names, so never both) reads the view's query, as a derived table in place of
the name -- the mechanism of the session's own views (:mod:`iceduck.session.own_objects`),
one expansion per use, so the tables inside are resolved and planned at each use and the
view sees their current snapshots.

* The version read: the current one, or the one time travel picks (``FOR VERSION AS OF 2``:
  a version id; ``FOR TIMESTAMP AS OF``: the version-log entry current then), as Spark reads
  a view's history.
* The SQL: the ``duckdb`` representation, else ``spark``, else ``trino``, transpiled by sqlglot
  (:func:`iceduck.sql.view_sql.duckdb_text`; a construct that cannot be translated is an
  error naming it and the dialect).
* The names inside: qualified with the version's ``default-namespace``, in this catalog
  (:func:`iceduck.sql.view_sql.qualified`). A ``default-catalog`` other than this catalog's
  name still means this catalog -- the view lives in it, and Spark records the session's
  current catalog there (``spark_catalog`` after ``USE spark_catalog.default``), a name
  only that session knew -- so a name led by it is read in this catalog too.
* The columns: the schema's names over the query's output by position, as Iceberg's
  ``ResolveViews`` in Spark aliases ``GetColumnByOrdinal(i)`` with the schema's field ``i``.

Views of views expand in turn; a view reached again on its own chain is refused, naming the
chain; a missing table inside is an error naming the view and the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from iceduck.catalog.base import LoadedView, TableIdentifier
from iceduck.engine.types import contains_struct, duckdb_type
from iceduck.errors import NotFoundError, UnsupportedError, UserError
from iceduck.session.iceberg_sources import Lookup, Source
from iceduck.session.name_resolution import resolve_view_name
from iceduck.spec.schema import Schema
from iceduck.spec.types import NestedField
from iceduck.spec.view_metadata import ViewVersion
from iceduck.sql.references import TableRef
from iceduck.sql.rewrite import quote_identifier
from iceduck.sql.view_sql import READ_ORDER, duckdb_text, qualified

#: how deep catalog views may nest
MAX_DEPTH = 64


@dataclass(frozen=True)
class ViewUse:
    """One reference to a catalog view: the view, the version read, its schema and its
    query as DuckDB runs it (names qualified)."""

    ref: TableRef
    view: LoadedView
    version: ViewVersion
    schema: Schema
    body: str
    #: the Iceberg tables its query reads, through views inside too (what EXPLAIN shows)
    sources: tuple[Source, ...] = ()


def find_view(ref: TableRef, lookup: Lookup) -> LoadedView | None:
    """The catalog view ``ref`` names, loaded; None when it names none."""
    if ref.path is not None:
        return None
    identifier = resolve_view_name(lookup.catalog, ref.parts, lookup.namespace)
    return None if identifier is None else lookup.catalog.load_view(identifier)


def view_use(
    ref: TableRef, view: LoadedView, catalog_name: str, chain: tuple[TableIdentifier, ...]
) -> ViewUse:
    """How ``ref`` reads ``view`` (module docstring); ``chain``: the views being expanded
    around this use, outermost first."""
    identifier = view.identifier
    if identifier in chain:
        shown = " -> ".join(str(v) for v in (*chain, identifier))
        raise UserError(f"view {identifier} refers to itself: {shown}")
    if len(chain) >= MAX_DEPTH:
        raise UserError(f"views nest more than {MAX_DEPTH} deep: {' -> '.join(str(v) for v in chain)}")
    version = _version(ref, view)
    rep = next((r for d in READ_ORDER if (r := version.representation(d)) is not None), None)
    if rep is None:
        dialects = ", ".join(sorted(version.dialects)) or "none"
        raise UserError(
            f"view {identifier} has no SQL iceduck reads "
            f"(it reads {', '.join(READ_ORDER)}; the view has {dialects})"
        )
    text = duckdb_text(rep.sql, rep.dialect, str(identifier))
    names = [catalog_name, *([version.default_catalog] if version.default_catalog else [])]
    body = qualified(text, catalog_name, version.default_namespace, names)
    return ViewUse(ref, view, version, view.metadata.schema_by_id(version.schema_id), body)


def _version(ref: TableRef, view: LoadedView) -> ViewVersion:
    travel = ref.time_travel
    metadata = view.metadata
    if travel is None:
        return metadata.current_version
    try:
        if travel.timestamp_ms is not None:
            return metadata.version_as_of(travel.timestamp_ms)
        if isinstance(travel.version, int):
            return metadata.version(travel.version)
    except NotFoundError as e:
        raise NotFoundError(f"view {view.identifier}: {e}") from e
    raise UserError(
        f"{ref.display} is a view: VERSION AS OF takes one of its version ids "
        f"({', '.join(str(v.version_id) for v in metadata.versions)}), not {travel.version!r}"
    )


def view_relation(use: ViewUse, rewritten: str) -> str:
    """The derived table that replaces the use: the query (its tables replaced by their
    scans: ``rewritten``) with the schema's column names by position, each cast to the
    schema's type (Spark's ``UpCast`` to the view's type: Spark's ``date_add`` gives a
    date where its DuckDB translation gives a timestamp)."""
    columns = ", ".join(quote_identifier(f.name) for f in use.schema.fields)
    alias = quote_identifier(use.view.identifier.name)
    items = ", ".join(_typed(f) for f in use.schema.fields)
    # the query on lines of its own: a trailing -- comment must not swallow the parenthesis
    return f"(SELECT {items} FROM (\n{rewritten}\n) AS {alias}({columns}))"


def _typed(f: NestedField) -> str:
    """A view column cast to its schema type; a struct, matched by field names in DuckDB,
    and a type DuckDB has no name for are left as the query gives them."""
    name = quote_identifier(f.name)
    if contains_struct(f.field_type):
        return name
    try:
        return f"CAST({name} AS {duckdb_type(f.field_type)}) AS {name}"
    except UnsupportedError:
        return name

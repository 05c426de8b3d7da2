"""Table metadata changes as plain data: what schema, partition and sort evolution take.

The evolution rules (:mod:`iceduck.txn.schema_update`, :mod:`iceduck.txn.spec_update`,
:mod:`iceduck.txn.sort_update`) receive these requests, not statements: a SQL ALTER TABLE is
translated into them by the table operations (:mod:`iceduck.ops.alter_requests`), and a catalog
server receiving metadata updates can build the same objects. They are the vocabulary of
Iceberg's own update builders (Java ``UpdateSchema`` / ``UpdatePartitionSpec`` /
``ReplaceSortOrder``, PyIceberg's ``UpdateSchema`` and ``UpdateSpec``, iceberg-rust's
``transaction``), with one request per object.

Values are already model values: types are :mod:`iceduck.spec.types` (nested field ids
of a new column are placeholders; evolution assigns the real ones), and a default is a
Python value of the column's type as :mod:`iceduck.spec.values` represents it -- turning
a literal as written into that value needs the column's type, which the caller looks up
(:meth:`iceduck.txn.schema_update.SchemaUpdate.column`).

Column paths are tuples of names (``("st", "a")``, ``("l", "element", "x")``), resolved
case-insensitively when no exact match exists (:mod:`iceduck.txn.schema_tree`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iceduck.spec.sort import NullOrder, SortDirection
from iceduck.spec.transforms import Transform
from iceduck.spec.types import IcebergType

ColumnPath = tuple[str, ...]


# -- placement of a column among its siblings ---------------------------------------------


@dataclass(frozen=True)
class MoveFirst:
    """Put the column before its siblings."""


@dataclass(frozen=True)
class MoveAfter:
    """Put the column right after the sibling named ``sibling``."""

    sibling: str


Placement = MoveFirst | MoveAfter


# -- schema ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddColumn:
    """A new column at ``path`` (parent path + its name; the parent is a struct, or a list
    or map whose element/value is one). ``default`` is both its ``initial-default`` and
    ``write-default``; ``has_default`` tells a null default from none."""

    path: ColumnPath
    type: IcebergType
    required: bool = False
    doc: str | None = None
    default: Any = None
    has_default: bool = False
    placement: Placement | None = None


@dataclass(frozen=True)
class DeleteColumn:
    path: ColumnPath
    #: a missing column is then no error
    if_exists: bool = False


@dataclass(frozen=True)
class RenameColumn:
    path: ColumnPath
    new_name: str


@dataclass(frozen=True)
class UpdateColumn:
    """Promote the type, change the nullability or the doc of a column (None: unchanged)."""

    path: ColumnPath
    type: IcebergType | None = None
    required: bool | None = None
    doc: str | None = None


@dataclass(frozen=True)
class SetColumnDefault:
    """A column's new ``write-default`` (the ``initial-default`` cannot change), a value of
    the column's type (None: null)."""

    path: ColumnPath
    value: Any


@dataclass(frozen=True)
class MoveColumn:
    path: ColumnPath
    placement: Placement


@dataclass(frozen=True)
class SetIdentifierFields:
    """Replace the identifier fields by ``columns``."""

    columns: tuple[ColumnPath, ...]


@dataclass(frozen=True)
class RemoveIdentifierFields:
    columns: tuple[ColumnPath, ...]


SchemaChange = (
    AddColumn
    | DeleteColumn
    | RenameColumn
    | UpdateColumn
    | SetColumnDefault
    | MoveColumn
    | SetIdentifierFields
    | RemoveIdentifierFields
)


# -- partition spec -------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionTerm:
    """An unbound partition field: ``transform`` of the column at ``source``, named
    ``name`` (None: the name Iceberg derives, ``id_bucket_16``, ``ts_day``...)."""

    transform: Transform
    source: ColumnPath
    name: str | None = None


@dataclass(frozen=True)
class AddPartitionField:
    term: PartitionTerm


@dataclass(frozen=True)
class RemovePartitionField:
    """Remove the field of ``term``, or the field named ``name`` (exactly one is set).

    A one-part identity ``term`` whose column does not exist names a field instead, and a
    ``name`` that is no field but a column means that column's identity field: Spark's
    ``DROP PARTITION FIELD x`` cannot tell them apart, so the spec decides.
    """

    term: PartitionTerm | None = None
    name: str | None = None


SpecChange = AddPartitionField | RemovePartitionField


# -- sort order -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SortTerm:
    """An unbound sort field: ``transform`` of the column at ``source``."""

    transform: Transform
    source: ColumnPath
    direction: SortDirection = SortDirection.ASC
    null_order: NullOrder = NullOrder.NULLS_FIRST

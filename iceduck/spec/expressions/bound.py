"""Bound expressions: predicates resolved to a field (id and type) with typed literals.

Binding (:mod:`.binding`) turns the unbound predicates of :mod:`.predicates` into a
:class:`BoundPredicate`: one class for every operation, holding the :class:`BoundReference`
of the column, and the literal (or literal set) already converted to the Python
representation of the field's type. Projection (:mod:`.projection`) produces the same
classes over the partition struct, so one set of evaluators serves both.

``And``/``Or``/``Not``/``AlwaysTrue``/``AlwaysFalse`` are shared with unbound expressions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iceduck.errors import UnsupportedError
from iceduck.spec.expressions.predicates import (
    AlwaysFalse,
    And,
    BooleanExpression,
    Not,
    Op,
    Or,
    format_literal,
    sorted_for_display,
)
from iceduck.spec.transforms import human_string
from iceduck.spec.types import IcebergType, NestedField


@dataclass(frozen=True)
class BoundReference:
    """A field of a struct, with the positions that reach it from the struct's root.

    ``accessor`` is the path of positions through nested structs (``(2, 0)`` is the first
    field of the struct in position 2); it is ``None`` for a field without a row position,
    which evaluators over rows refuse. ``name`` is the dotted name used to bind.
    """

    field: NestedField
    accessor: tuple[int, ...] | None
    name: str

    @property
    def field_id(self) -> int:
        return self.field.field_id

    @property
    def field_type(self) -> IcebergType:
        return self.field.field_type

    def getter(self) -> Callable[[Any], Any]:
        """A function reading this field's value from a tuple (a null parent gives null)."""
        path = self.accessor
        if path is None:
            raise UnsupportedError(f"field {self.name!r} has no position in a row (inside a list or map)")
        if len(path) == 1:
            (pos,) = path
            return lambda row: row[pos]

        def get(row: Any) -> Any:
            for pos in path:
                if row is None:
                    return None
                row = row[pos]
            return row

        return get

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class BoundPredicate(BooleanExpression):
    """``op`` applied to ``ref``: ``literal`` for comparisons and prefixes, ``literals`` for
    ``IN``/``NOT IN`` (a frozenset with at least two values: binding turns one into ``=``)."""

    op: Op
    ref: BoundReference
    literal: Any = None
    literals: frozenset[Any] | None = field(default=None)

    def negate(self) -> BooleanExpression:
        return BoundPredicate(self.op.negated, self.ref, self.literal, self.literals)

    def _show(self, value: Any) -> str:
        try:
            text = human_string(self.ref.field_type, value)
        except Exception:  # display only: never fail on an odd value
            text = str(value)
        return format_literal(value) if isinstance(value, str | bytes) else text

    def __str__(self) -> str:
        if self.op.is_unary:
            return f"{self.op.value}({self.ref})"
        if self.literals is not None:
            shown = ", ".join(self._show(v) for v in sorted_for_display(self.literals))
            return f"{self.ref} {self.op.value} ({shown})"
        return f"{self.ref} {self.op.value} {self._show(self.literal)}"


def bound_predicate(op: Op, ref: BoundReference, values: Any = None) -> BooleanExpression:
    """A bound predicate, normalising sets: an empty ``IN`` is false, an empty ``NOT IN``
    keeps only non-null values, and a one-element set becomes ``=``/``!=``."""
    if not op.is_set:
        return BoundPredicate(op, ref, values)
    literals = frozenset(values)
    if not literals:
        return AlwaysFalse() if op is Op.IN else BoundPredicate(Op.NOT_NULL, ref)
    if len(literals) == 1:
        (only,) = literals
        return BoundPredicate(Op.EQ if op is Op.IN else Op.NOT_EQ, ref, only)
    return BoundPredicate(op, ref, None, literals)


def referenced_field_ids(expr: BooleanExpression) -> set[int]:
    """Field ids of every bound reference in ``expr`` (to know which metrics matter)."""
    if isinstance(expr, BoundPredicate):
        return {expr.ref.field_id}
    if isinstance(expr, And | Or):
        return referenced_field_ids(expr.left) | referenced_field_ids(expr.right)
    if isinstance(expr, Not):
        return referenced_field_ids(expr.child)
    return set()

"""What a procedure is: its name, Spark's parameters and result columns, and the function
that runs it.

Each procedure module defines a :class:`Procedure` named ``PROCEDURE``; the registry
(:mod:`iceduck.ops.procedures.registry`) finds it by name. A procedure's function takes
the operation context and its bound arguments (:class:`Arguments`: Python values of its
parameters' types, see :mod:`iceduck.ops.procedures.arguments`) and returns its rows in
the order of ``output``'s columns -- the columns of Spark's procedure of the same name, so
a script reading ``CALL`` results works against either engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pyarrow as pa

from iceduck.catalog.base import LoadedTable
from iceduck.errors import UserError
from iceduck.ops.context import OpContext
from iceduck.sql.classify import dotted_name


class Kind(Enum):
    """The types Spark's procedure parameters take."""

    STRING = "string"
    LONG = "long"
    INT = "int"
    BOOLEAN = "boolean"
    #: a point in time: bound as epoch milliseconds
    TIMESTAMP = "timestamp"
    LONG_ARRAY = "array<long>"
    STRING_ARRAY = "array<string>"
    STRING_MAP = "map<string,string>"


@dataclass(frozen=True)
class Parameter:
    """One parameter, in Spark's order (positional arguments bind in this order)."""

    name: str
    kind: Kind
    required: bool = False


class Arguments(Mapping[str, Any]):
    """A procedure's bound arguments by parameter name; absent when not given (or NULL)."""

    def __init__(self, procedure: str, values: dict[str, Any]) -> None:
        self.procedure = procedure
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Any:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def required(self, name: str) -> Any:
        """The value of a required parameter (the binder has checked it is there)."""
        return self._values[name]


#: what a procedure function returns: its rows, in ``output``'s column order
Rows = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Procedure:
    """A ``CALL system.<name>`` procedure."""

    name: str
    parameters: tuple[Parameter, ...]
    output: pa.Schema
    run: Callable[[OpContext, Arguments], Rows]
    #: a one-line description (the shell's completion, error messages)
    summary: str = ""

    def rows_table(self, rows: Rows) -> pa.Table:
        """The result rows as an Arrow table of Spark's columns and types."""
        columns: list[list[Any]] = [[row[i] for row in rows] for i in range(len(self.output))]
        fields = zip(columns, self.output, strict=True)
        arrays = [pa.array(values, type=field.type) for values, field in fields]
        return pa.table(arrays, schema=self.output)


def table_argument(ctx: OpContext, args: Arguments, name: str = "table") -> LoadedTable:
    """The table a procedure's ``table`` argument names (``'db.t'``, ``'catalog.db.t'``,
    quoted parts allowed), loaded; NotFoundError naming it otherwise."""
    text = args.required(name)
    parts = dotted_name(text, f"{args.procedure}'s {name} argument")
    target = ctx.resolve_target(parts)
    if target.branch != "main":
        raise UserError(f"{args.procedure} takes a table, not a branch: {text}")
    return target.table

"""Python objects a statement can read as tables: registered ones, and the caller's variables.

DuckDB's replacement scans let ``SELECT * FROM df`` read a DataFrame held in a Python
variable ``df``. They cannot work through iceduck as they stand: DuckDB runs many frames
below the user's code and looks a name up from *its* caller outwards, finding iceduck's
own locals first. So the public entries (``Connection.execute``, ``Cursor.execute``,
``executemany``) capture the caller's frame (:meth:`PythonScope.of_caller`), and the
session looks up a one-part name there -- only a name that is no Iceberg table and no
DuckDB object, as DuckDB lets a real table win over a replacement scan -- in each frame's
locals, then its globals, from the caller outwards (DuckDB's order), skipping iceduck's
frames. The session then registers what it found on the statement's DuckDB cursor
(:mod:`iceduck.session.python_objects`).

``register(name, obj)`` puts an object in a :class:`Registry`: like DuckDB's registered
view, a catalog object, it wins over a variable and over an Iceberg table of the current
namespace.

What counts as a table is what DuckDB's replacement scan reads (:func:`is_table_like`):
pandas and polars DataFrames (and polars LazyFrames), pyarrow Tables, RecordBatches,
RecordBatchReaders, Datasets and Scanners, and anything exporting an Arrow stream
(``__arrow_c_stream__``) -- but not iceduck's own cursors. This module imports none of
those libraries, nor DuckDB: it reads class names, so ``import iceduck`` stays cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any

from iceduck.errors import UserError

#: (module prefix, class name) of the objects DuckDB's replacement scan reads
_TABLE_CLASSES = frozenset(
    {
        ("pandas", "DataFrame"),
        ("polars", "DataFrame"),
        ("polars", "LazyFrame"),
        ("pyarrow", "Table"),
        ("pyarrow", "RecordBatch"),
        ("pyarrow", "RecordBatchReader"),
        ("pyarrow", "Dataset"),
        ("pyarrow", "Scanner"),
    }
)

#: what the errors say a table object may be
TABLE_KINDS = (
    "a pandas or polars DataFrame, a pyarrow Table, RecordBatch, RecordBatchReader or Dataset, "
    "or an object with __arrow_c_stream__"
)


def is_table_like(obj: object) -> bool:
    """Whether DuckDB reads ``obj`` as a table (see the module docstring); subclasses count."""
    if isinstance(obj, type):
        return False  # the class pyarrow.Table has __arrow_c_stream__ too
    if _is_iceduck(type(obj).__module__):
        return False  # a cursor streams its result, but is no table (DuckDB's connections neither)
    if hasattr(type(obj), "__arrow_c_stream__"):
        return True
    return any(
        (cls.__module__.split(".", 1)[0], cls.__name__) in _TABLE_CLASSES for cls in type(obj).__mro__
    )


def kind_of(obj: object) -> str:
    """``int``, ``pandas.DataFrame``: what an object is, for messages."""
    cls = type(obj)
    module = cls.__module__.split(".", 1)[0]
    return cls.__name__ if module == "builtins" else f"{module}.{cls.__name__}"


class Registry:
    """Objects registered under a name (``connection.register``); names compare without
    case, as DuckDB's catalog names do."""

    def __init__(self) -> None:
        self._objects: dict[str, Any] = {}
        #: changes with every register/unregister: what a kept query's validity notes
        self.version = 0

    def register(self, name: str, obj: object) -> None:
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"register needs a name (a non-empty string), not {name!r}")
        if not is_table_like(obj):
            raise UserError(
                f"cannot register {name!r}: an object of type {kind_of(obj)} is not a table; "
                f"register {TABLE_KINDS}"
            )
        self._objects[name.lower()] = obj
        self.version += 1

    def unregister(self, name: str) -> None:
        """Forget ``name``; an unknown name is no error (as in DuckDB)."""
        if isinstance(name, str):
            self._objects.pop(name.lower(), None)
            self.version += 1

    def get(self, name: str) -> Any | None:
        return self._objects.get(name.lower())

    def clear(self) -> None:
        self._objects.clear()
        self.version += 1


def _is_iceduck(module: object) -> bool:
    return isinstance(module, str) and (module == "iceduck" or module.startswith("iceduck."))


def _frames(start: FrameType | None) -> Iterator[FrameType]:
    """``start`` and its callers, iceduck's own frames left out."""
    frame = start
    while frame is not None:
        if not _is_iceduck(frame.f_globals.get("__name__")):
            yield frame
        frame = frame.f_back


class PythonScope:
    """Where one statement looks for objects: the registries (first wins) and the frame of
    the code that called iceduck with its callers. Held for the statement only, so no user
    object outlives it through iceduck."""

    def __init__(self, registries: Sequence[Registry] = (), frame: FrameType | None = None) -> None:
        self.registries = tuple(registries)
        self.frame = frame

    @classmethod
    def of_caller(cls, registries: Sequence[Registry] = ()) -> PythonScope:
        """The scope of whoever called the iceduck function calling this (iceduck's frames skipped)."""
        return cls(registries, sys._getframe(1))

    def with_registry(self, registry: Registry) -> PythonScope:
        """This scope with ``registry`` looked in after its own registries."""
        return PythonScope((*self.registries, registry), self.frame)

    def registered(self, name: str) -> Any | None:
        for registry in self.registries:
            obj = registry.get(name)
            if obj is not None:
                return obj
        return None

    def _bindings(self, name: str) -> Iterator[Any]:
        """Every value ``name`` has in the frames, in DuckDB's order (locals, then globals,
        of each frame from the caller outwards)."""
        for frame in _frames(self.frame):
            for names in (frame.f_locals, frame.f_globals):
                if name in names:
                    yield names[name]

    def variable(self, name: str) -> Any | None:
        """The first table-like value of a variable ``name`` (an int of that name in an inner
        frame does not hide a DataFrame further out); None when there is none."""
        return next((value for value in self._bindings(name) if is_table_like(value)), None)

    def hint(self, name: str) -> str:
        """Why a variable ``name`` was not read as a table (``""`` when there is no such
        variable): the end of a "table does not exist" message."""
        value = next(self._bindings(name), None)
        if value is None:
            return ""
        return f" (the Python variable {name} is of type {kind_of(value)}, not a table: {TABLE_KINDS})"

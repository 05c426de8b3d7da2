"""One statement's Python objects: which one-part names read one, and registering them.

The order a one-part name is resolved in, as DuckDB resolves a real table before a
replacement scan:

1. an object registered on the cursor or the connection (``register``; like DuckDB's
   registered view, a catalog object);
2. an Iceberg table (in the current namespace, ``USE``);
3. a DuckDB table or view (``pg_tables``);
4. a DataFrame or Arrow object in a variable of the calling Python code
   (:class:`iceduck.session.caller_scope.PythonScope`).

An object is registered on the statement's DuckDB cursor under a unique name
(``__iceduck_py_<n>``) that replaces the reference in the text, aliased by the name the
user wrote, so one object named twice is registered once and two variables differing
only in case stay apart. Once a write statement has run, :meth:`StatementObjects.release`
unregisters them, so the cursor kept for the statement's result holds no user object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from iceduck.engine.objects import is_duckdb_relation, register_object, unregister_object
from iceduck.session.caller_scope import PythonScope
from iceduck.sql.rewrite import quote_identifier

#: the names iceduck gives its own DuckDB objects (scans, registered objects, temporary tables),
#: which the queries of a write statement name: never a Python object
INTERNAL_PREFIX = "__iceduck_"

if TYPE_CHECKING:
    from iceduck.engine.connection import Duck
    from iceduck.sql.references import TableRef


class StatementObjects:
    """The Python objects of one statement running on ``duck`` (see the module docstring)."""

    def __init__(self, duck: Duck, scope: PythonScope, unique_name: Callable[[str], str]) -> None:
        self.duck = duck
        self.scope = scope
        self.unique_name = unique_name
        #: id(object) -> (registered name, object): held so the id stays the object's
        self._attached: dict[int, tuple[str, Any]] = {}
        #: registered name -> the name the statement wrote (for error messages)
        self.written: dict[str, str] = {}
        #: one-part names no Iceberg table, registered object or variable answered
        self._unresolved: list[str] = []

    def registered(self, ref: TableRef) -> str | None:
        """The relation of a registered object ``ref`` names; None when it names none."""
        name = _bare(ref)
        obj = None if name is None else self.scope.registered(name)
        return None if obj is None or name is None else self.attach(name, obj)

    def variable(self, ref: TableRef) -> str | None:
        """The relation of a Python variable ``ref`` names (a name that is no Iceberg table:
        the caller asked the catalog first); None when DuckDB has a relation of that name, or
        there is no table-like variable of that name."""
        name = _bare(ref)
        if name is None:
            return None
        obj = self.scope.variable(name)
        if obj is None:
            self._unresolved.append(name)
            return None
        if is_duckdb_relation(self.duck, name):
            return None
        return self.attach(name, obj)

    def bind(self, bound: dict[str, Any]) -> None:
        """Register the objects bound to parameters (``FROM ?``) under the names spliced
        into the text in their place."""
        for name, obj in bound.items():
            register_object(self.duck, name, obj)
            self._attached[id(obj)] = (name, obj)
            self.written[name] = "?"

    def attach(self, written: str, obj: Any) -> str:
        """``obj`` registered on the cursor (once per statement); its quoted name."""
        attached = self._attached.get(id(obj))
        if attached is None:
            attached = self._attached[id(obj)] = (self.unique_name("py"), obj)
            register_object(self.duck, attached[0], obj)
            self.written[attached[0]] = written
        return quote_identifier(attached[0])

    def hint(self, message: str) -> str:
        """Why a name DuckDB reports missing in ``message`` was not read from a Python
        variable of that name (it is no table); ``""`` when no such variable explains it."""
        for name in self._unresolved:
            if f"Table with name {name} does not exist" in message:
                return self.scope.hint(name)
        return ""

    def release(self) -> None:
        """Unregister every object of the statement (after a write: nothing reads them later)."""
        for name, _ in self._attached.values():
            unregister_object(self.duck, name)
        self._attached.clear()


def shadows(scope: PythonScope, ref: TableRef) -> bool:
    """Whether an object registered in ``scope`` takes the name ``ref`` reads (registered
    objects outrank Iceberg tables, see :meth:`StatementObjects.registered`)."""
    name = _bare(ref)
    return name is not None and scope.registered(name) is not None


def _bare(ref: TableRef) -> str | None:
    """The one name of a one-part reference without time travel (what may be a Python
    object); None for any other reference."""
    if ref.path is not None or len(ref.parts) != 1 or ref.time_travel is not None:
        return None
    name = ref.parts[0]
    return None if name.startswith(INTERNAL_PREFIX) else name

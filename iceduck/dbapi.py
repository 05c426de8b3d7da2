"""PEP 249 (DB-API 2.0) module globals and exceptions, and how iceduck's errors map onto them.

An error a cursor raises is *both* the PEP 249 class and the iceduck error it came from:
``except iceduck.ProgrammingError`` and ``except iceduck.errors.NotFoundError`` both
catch an unknown table. The mapping (:data:`MAPPING`) follows the kinds of
:mod:`iceduck.errors`:

=========================  ======================  ================================
iceduck                    PEP 249                 why
=========================  ======================  ================================
UserError (NotFound...)    ProgrammingError        the statement or a name is wrong
ValidationError            DataError               a value breaks a rule
UnsupportedError           NotSupportedError       valid, but not supported (yet)
CorruptDataError           DatabaseError           a file of the table is broken
CommitConflictError        OperationalError        retry may succeed
CommitStateUnknownError    OperationalError        look at the table before retrying
StorageError               OperationalError        free space or fix permissions
=========================  ======================  ================================

Anything else raised by DuckDB surfaces as :class:`OperationalError`.

Type codes: ``cursor.description[i][1]`` is the DuckDB type of the column as text
(``"VARCHAR"``, ``"DECIMAL(10,2)"``, ``"TIMESTAMP WITH TIME ZONE"``, ``"INTEGER[]"``), and
the type objects :data:`STRING`, :data:`BINARY`, :data:`NUMBER`, :data:`DATETIME` compare
equal to the codes of their family. Nested types (lists, structs, maps) belong to none.
:data:`ROWID` matches nothing: Iceberg rows have no physical row id a query could return.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

from iceduck import errors

apilevel = "2.0"
#: threads may share the module, not connections (each connection owns one DuckDB database)
threadsafety = 1
#: PEP 249 wants one value: ``?`` markers with a sequence of parameters. DuckDB's named
#: style works as well -- ``$name`` markers with a dict (``WHERE id = $id``, ``{"id": 5}``) --
#: and so does ``$1``; ``:name`` (PEP 249's "named") does not, since DuckDB reads ``:`` otherwise.
paramstyle = "qmark"


class Warning(Exception):
    """Important warnings (PEP 249); iceduck raises none yet."""


class Error(Exception):
    """Base of every PEP 249 error."""


class InterfaceError(Error):
    """Misuse of the interface: a closed connection or cursor, fetching before executing."""


class DatabaseError(Error):
    pass


class DataError(DatabaseError):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


#: iceduck error kind -> PEP 249 class, most specific first
MAPPING: tuple[tuple[type[errors.IceduckError], type[Error]], ...] = (
    (errors.ValidationError, DataError),
    (errors.UserError, ProgrammingError),
    (errors.UnsupportedError, NotSupportedError),
    (errors.CorruptDataError, DatabaseError),
    (errors.CommitConflictError, OperationalError),
    (errors.CommitStateUnknownError, OperationalError),
    (errors.StorageError, OperationalError),
    (errors.IceduckError, DatabaseError),
)

_COMBINED: dict[tuple[type[Error], type[Exception]], type[Error]] = {}


def _combined(dbapi_class: type[Error], original: type[Exception]) -> type[Error]:
    key = (dbapi_class, original)
    found = _COMBINED.get(key)
    if found is None:
        found = type(original.__name__, (dbapi_class, original), {"__module__": original.__module__})
        _COMBINED[key] = found
    return found


def dbapi_error(error: Exception) -> Error:
    """``error`` as an instance of both its PEP 249 class and its own class.

    The copy keeps the message and attributes (``CorruptDataError.path``...); raise it
    ``from error`` so the original stays in the chain.
    """
    if isinstance(error, Error):
        return error
    if not isinstance(error, errors.IceduckError):
        return OperationalError(str(error))  # e.g. DuckDB's own (C types cannot be mixed in)
    dbapi_class = next(mapped for iceduck_class, mapped in MAPPING if isinstance(error, iceduck_class))
    combined = _combined(dbapi_class, type(error))
    copy = combined.__new__(combined)
    copy.__dict__.update(error.__dict__)
    copy.args = error.args
    return copy


# -- type objects and constructors (PEP 249, "Type Objects and Constructors") --------------------


class DBAPITypeObject:
    """Equal to every type code of one family: ``description[i][1] == iceduck.NUMBER``."""

    def __init__(self, name: str, *types: str) -> None:
        self.name = name
        self.types = frozenset(types)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DBAPITypeObject):
            return other is self
        return isinstance(other, str) and _base_type(other) in self.types

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}>"


def _base_type(code: str) -> str:
    """``DECIMAL(10,2)`` -> ``DECIMAL``; ``INTEGER[]`` stays itself (a list is no number)."""
    return code.split("(", 1)[0].strip().upper()


STRING = DBAPITypeObject("STRING", "VARCHAR", "CHAR", "BPCHAR", "TEXT", "STRING", "UUID", "ENUM", "JSON")
BINARY = DBAPITypeObject("BINARY", "BLOB", "BYTEA", "VARBINARY", "BIT")
NUMBER = DBAPITypeObject(
    "NUMBER",
    *("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT"),
    *("UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"),
    *("FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN"),
)
DATETIME = DBAPITypeObject(
    "DATETIME",
    *("DATE", "TIME", "TIME_NS", "TIME WITH TIME ZONE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE"),
    *("TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMPTZ_NS", "TIMESTAMP_US", "INTERVAL"),
)
#: Iceberg rows have no physical id (``_pos`` is a metadata column, not a key): matches nothing
ROWID = DBAPITypeObject("ROWID")

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> datetime.date:  # PEP 249 names these three
    return Date(*time.localtime(ticks)[:3])


def TimeFromTicks(ticks: float) -> datetime.time:
    return Time(*time.localtime(ticks)[3:6])


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    return Timestamp(*time.localtime(ticks)[:6])


def describe_column(name: str, duck_type: Any) -> tuple[Any, ...]:
    """A PEP 249 description 7-tuple for a DuckDB result column.

    ``(name, type_code, display_size, internal_size, precision, scale, null_ok)``: the type
    code is the type's text; precision and scale are filled for decimals; sizes and
    nullability are unknown for a query result, hence None.
    """
    precision = scale = None
    if str(getattr(duck_type, "id", "")).lower() == "decimal":
        params = dict(duck_type.children)
        precision, scale = int(params["precision"]), int(params["scale"])
    return (name, str(duck_type), None, None, precision, scale, None)


def write_answer(statement: str, rowcount: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """What a cursor describes and fetches after a statement without rows of its own, as
    DuckDB's Python API answers (checked against DuckDB 2.0.1): INSERT, UPDATE, DELETE, MERGE
    and CREATE TABLE AS give one ``Count`` BIGINT row, the rows changed; another CREATE
    gives the ``Count`` column and no row; any other statement (DROP, ALTER, USE, BEGIN...)
    a ``Success`` BOOLEAN column and no row."""
    if rowcount >= 0:
        return [describe_column("Count", "BIGINT")], [(rowcount,)]
    if statement.lstrip().upper().startswith("CREATE"):
        return [describe_column("Count", "BIGINT")], []
    return [describe_column("Success", "BOOLEAN")], []

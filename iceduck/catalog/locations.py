"""Explicit locations a new table may be given: ``LOCATION`` and ``write.data.path`` /
``write.metadata.path``.

An explicit location is the user's choice, inside the warehouse or anywhere else (Java's
``BaseMetastoreCatalog`` takes it as given, and so do we). Only what no writer could ever
use is refused, at CREATE, before any file is written:

* a backslash: DuckDB, which writes the data files, reads ``\\`` as a folder separator
  when it writes a folder of files (``COPY ... TO 'a\\b' (FILE_SIZE_BYTES ...)`` writes
  into ``a/b``), so the files would land where the table does not look for them and
  every INSERT would fail with a misleading "data file does not exist";
* a NUL character, which no file path can hold.

A ``file:`` URI is checked after its percent-decoding too (``%5C`` is a backslash,
``%00`` a NUL), as that is the path the files get. Names that become folders are checked
by :mod:`iceduck.catalog.names`.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from iceduck.errors import ValidationError
from iceduck.spec.properties import WRITE_DATA_LOCATION, WRITE_METADATA_LOCATION

#: the table properties that name a folder the table's files are written to
PATH_PROPERTIES = (WRITE_DATA_LOCATION, WRITE_METADATA_LOCATION)

_PROBLEMS = {
    "\\": "a backslash '\\', which DuckDB reads as a folder separator when it writes data files, "
    "so no INSERT could write the table (use '/')",
    "\x00": "a NUL character, which no file path can hold",
}


def location_problem(location: str) -> str | None:
    """Why files cannot be written under ``location``, or None."""
    spellings = [location, unquote(location)] if location.startswith("file:") else [location]
    for character, problem in _PROBLEMS.items():
        if any(character in spelling for spelling in spellings):
            return f"it contains {problem}"
    return None


def check_location(location: str, what: str = "LOCATION") -> None:
    """Refuse an explicit table location no writer can use; ``what`` names it in the message."""
    problem = location_problem(location)
    if problem is not None:
        raise ValidationError(f"invalid {what} {location!r}: {problem}")


def check_path_properties(properties: Mapping[str, str]) -> None:
    """Refuse ``write.data.path`` / ``write.metadata.path`` values no writer can use."""
    for name in PATH_PROPERTIES:
        value = properties.get(name)
        if value is not None:
            check_location(value, f"table property {name!r} value")

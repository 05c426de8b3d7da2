"""Explicit locations a new table may be given: ``LOCATION`` and ``write.data.path`` /
``write.metadata.path``.

An explicit location is the user's choice, inside the warehouse or anywhere else (Java's
``BaseMetastoreCatalog`` takes it as given, and so do we). Only what no writer could ever
use is refused, at CREATE, before any file is written:

* a backslash: DuckDB, which writes the data files, reads ``\\`` as a folder separator
  when it writes a folder of files (``COPY ... TO 'a\\b' (FILE_SIZE_BYTES ...)`` writes
  into ``a/b``), so the files would land where the table does not look for them and
  every INSERT would fail with a misleading "data file does not exist";
* a NUL character, which no file path can hold, and text that is not valid Unicode (a
  lone surrogate has no UTF-8 form, so no file name can spell it);
* in a ``file:`` location, a raw tab, CR or LF, ``?`` or ``#``: iceduck, Java (Hadoop's
  ``Path``) and DuckDB take a ``file:`` path literally (:func:`iceduck.io.fileio.to_local_path`),
  but readers that parse it as a URI (PyIceberg through ``urllib.parse``) drop the first
  three or end the path at the other two, and would look in another folder (a plain path
  with these characters is fine: no one parses it as a URI);
* in a local location, a folder name over 255 bytes of UTF-8, which the file system
  would refuse at the first write (:data:`iceduck.catalog.names.MAX_FOLDER_NAME_BYTES`).

A ``file:`` path is never percent-decoded (``%5C`` is three characters of a folder name),
so it is checked as written. Locations of other schemes are left to their store. Names
that become folders are checked by :mod:`iceduck.catalog.names`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from iceduck.catalog.names import MAX_FOLDER_NAME_BYTES
from iceduck.errors import ValidationError
from iceduck.spec.properties import WRITE_DATA_LOCATION, WRITE_METADATA_LOCATION

#: the table properties that name a folder the table's files are written to
PATH_PROPERTIES = (WRITE_DATA_LOCATION, WRITE_METADATA_LOCATION)

_PROBLEMS = {
    "\\": "a backslash '\\', which DuckDB reads as a folder separator when it writes data files, "
    "so no INSERT could write the table (use '/')",
    "\x00": "a NUL character, which no file path can hold",
}


#: characters that are not part of a URI's path: URI parsers drop them, or end the path there
_NOT_IN_URI_PATHS = {
    "\t": "a tab, which URI parsers drop",
    "\r": "a carriage return, which URI parsers drop",
    "\n": "a line feed, which URI parsers drop",
    "?": "'?', which URI parsers read as the start of a query, not part of the path",
    "#": "'#', which URI parsers read as the start of a fragment, not part of the path",
}

#: a URI scheme (``s3:``, ``file:``...): RFC 3986, section 3.1
URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def location_problem(location: str) -> str | None:
    """Why files cannot be written under ``location``, or None."""
    is_file_uri = location.startswith("file:")
    for character, problem in _PROBLEMS.items():
        if character in location:
            return f"it contains {problem}"
    if is_file_uri:
        for character, what in _NOT_IN_URI_PATHS.items():
            if character in location:
                return f"it contains {what} (write a plain path instead of a file: URI)"
    try:
        parts = [part.encode("utf-8") for part in location.split("/")]
    except UnicodeEncodeError:
        return "it is not valid Unicode text (it holds a lone surrogate)"
    if is_file_uri or not URI_SCHEME.match(location):
        longest = max(parts, key=len)
        if len(longest) > MAX_FOLDER_NAME_BYTES:
            return (
                f"its folder name {longest[:20].decode(errors='replace')!r}... has {len(longest)} bytes "
                f"in UTF-8, over the {MAX_FOLDER_NAME_BYTES} bytes of a folder name"
            )
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

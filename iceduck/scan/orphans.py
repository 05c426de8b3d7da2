"""Orphan files: files under a table's location that none of its metadata references.

Java's ``DeleteOrphanFilesSparkAction``: list the location (hidden names skipped,
:mod:`iceduck.io.listing`), keep every file the metadata references
(:func:`~iceduck.scan.reachable.referenced_by_table`) and every file modified at or after
``older_than`` -- a write in progress has files that no committed metadata names yet, so
age is what protects them -- and the rest are orphans.

Listed and referenced files are compared by local path: Spark's ``file:/a/b``, ``file:///a/b``
and iceduck's ``/a/b`` are one file (Java needs ``equal_schemes``/``equal_authorities`` for
this; a local table needs neither). In an object store, ``s3a://`` and ``s3n://`` compare
equal to ``s3://`` (:func:`~iceduck.scan.reachable.key`).
"""

from __future__ import annotations

from iceduck.catalog.base import LoadedTable
from iceduck.errors import UserError
from iceduck.io.listing import list_files
from iceduck.io.object_store import is_object_store
from iceduck.scan.reachable import key, referenced_by_table


def orphan_files(table: LoadedTable, location: str, older_than_ms: int) -> list[str]:
    """The local paths of the orphan files under ``location`` (which must be the table's
    location or a folder below it), sorted."""
    root = key(table.metadata.location).rstrip("/")
    folder = key(location).rstrip("/")
    if folder != root and not folder.startswith(root + "/"):
        raise UserError(
            f"location {location} is not under the location of table {table.identifier} "
            f"({table.metadata.location}): iceduck only removes orphan files of the table's own folders"
        )
    referenced = referenced_by_table(table.metadata, table.metadata_location)
    return sorted(
        listed.path
        for listed in list_files(location if is_object_store(location) else folder)
        if listed.modified_ms < older_than_ms and key(listed.path) not in referenced
    )

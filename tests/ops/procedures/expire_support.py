"""What the expiry and orphan tests compare: the files on disk and the files the table's
metadata references, each found on its own (the disk by walking it, the references
through the metadata tables), never through the code under test."""

from __future__ import annotations

import os
import time
from pathlib import Path

from iceduck.catalog.base import TableIdentifier
from iceduck.connection import Connection
from iceduck.io.fileio import to_local_path

#: an ``older_than`` after every snapshot: only the retention counts decide what stays
FUTURE = "TIMESTAMP '2999-01-01 00:00:00'"


def table_dir(con: Connection, namespace: str, name: str) -> Path:
    """The local folder of a table (its location may be a ``file:`` URI)."""
    loaded = con.session.catalog.load_table(TableIdentifier((namespace,), name))
    return Path(to_local_path(loaded.metadata.location))


def disk_files(table_dir: Path) -> set[str]:
    """Every file under the table folder, hidden names (``.crc``, temporary files) aside."""
    found = set()
    for folder, folders, files in os.walk(table_dir):
        folders[:] = [d for d in folders if not d.startswith((".", "_"))]
        found.update(os.path.join(folder, f) for f in files if not f.startswith((".", "_")))
    return found


def referenced_files(con: Connection, table: str, *, deleted_entries: bool = False) -> set[str]:
    """The local paths of the files ``table``'s metadata references: content files of the
    manifest entries of every snapshot (live entries only unless ``deleted_entries``), every
    manifest, every manifest list, every metadata file of the log (the current one included)."""
    cur = con.cursor()
    status = "" if deleted_entries else "WHERE status <> 2"
    rows = cur.execute(f"SELECT data_file.file_path FROM {table}.all_entries {status}").fetchall()
    rows += cur.execute(f"SELECT path FROM {table}.all_manifests").fetchall()
    rows += cur.execute(f"SELECT manifest_list FROM {table}.snapshots").fetchall()
    rows += cur.execute(f"SELECT file FROM {table}.metadata_log_entries").fetchall()
    return {os.path.normpath(to_local_path(r[0])) for r in rows}


def age_files(table_dir: Path, days: float = 10) -> None:
    """Set every file's modification time ``days`` back, so orphan removal's age guard
    (three days by default) does not hide what the test is about."""
    then = time.time() - days * 86400
    for folder, _, files in os.walk(table_dir):
        for f in files:
            os.utime(os.path.join(folder, f), (then, then))


def snapshot_ids(con: Connection, table: str) -> list[int]:
    """Snapshot ids, oldest first."""
    rows = con.execute(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at, snapshot_id")
    return [int(r[0]) for r in rows.fetchall()]


def rows_at(con: Connection, table: str, version: int | str | None = None) -> list[tuple[object, ...]]:
    """The table's rows (at a snapshot id or ref), sorted."""
    as_of = (
        ""
        if version is None
        else f" VERSION AS OF {version!r}"
        if isinstance(version, str)
        else f" VERSION AS OF {version}"
    )
    return sorted(con.execute(f"SELECT * FROM {table}{as_of}").fetchall())

"""Where a write puts its finished files: the table's own folder, or a local spool.

DuckDB writes files only to paths it can create (the local disk; an object store only
through its ``httpfs`` extension, which is not always there), and a write's
post-processing is local work on finished files: renaming DuckDB's output into partition
folders, rewriting a sorted table's files in order, the ``fixed`` column rewrite, the
footer edit that strips INT32 annotations, reading footer metrics. So for a table in an
object store every file is made in a local spool folder (``tempfile``), post-processed
there unchanged, then uploaded to its final location in one PUT, and its spooled copy
removed. A failure removes the spool and every object already uploaded: nothing the
catalog never committed stays behind (and an object left by a crash is an orphan file,
which ``remove_orphan_files`` finds).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from iceduck.io import fileio, object_files
from iceduck.io.fileio import storage_errors
from iceduck.io.object_store import is_object_store


class Placement:
    """The files of one write below ``data_location`` (a folder location)."""

    def __init__(self, data_location: str) -> None:
        self.location = data_location.rstrip("/")
        self.remote = is_object_store(self.location)
        if self.remote:
            self.root = tempfile.mkdtemp(prefix="iceduck-spool-")
        else:
            self.root = fileio.to_local_path(self.location)
            with storage_errors(self.root):
                os.makedirs(self.root, exist_ok=True)
        #: what was placed (local paths, or uploaded locations), removed by :meth:`discard`
        self.placed: list[str] = []

    def local(self, relative: str) -> str:
        """The local path the file ``relative`` (to the data location) is made at."""
        path = os.path.join(self.root, relative)
        with storage_errors(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    def location_of(self, relative: str) -> str:
        return f"{self.location}/{relative}"

    def made(self, relative: str) -> None:
        """The local file ``relative`` is finished: in its place (local), or recorded for
        :meth:`finish` to upload."""
        self.placed.append(self.local(relative) if not self.remote else relative)

    def finish(self) -> None:
        """Upload every finished spooled file (nothing to do for a local table)."""
        if not self.remote:
            return
        relatives, self.placed = self.placed, []
        for relative in relatives:
            location = self.location_of(relative)
            self.placed.append(location)  # before the upload: a partial one is removed too
            object_files.upload(os.path.join(self.root, relative), location)
            os.unlink(os.path.join(self.root, relative))

    def discard(self) -> None:
        """Remove every file placed so far (the write failed)."""
        for placed in self.placed:
            if self.remote and not is_object_store(placed):
                continue  # still in the spool, which close() removes
            try:
                fileio.delete(placed)
            except Exception:  # cleanup must not hide the write's own error
                pass
        self.placed = []

    def close(self) -> None:
        if self.remote:
            shutil.rmtree(self.root, ignore_errors=True)

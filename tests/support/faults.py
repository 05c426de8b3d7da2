"""Real faults for the error-kind tests and the stress script: no mocks, the kernel refuses.

* :func:`tmpfs` mounts a small RAM file system; :func:`disk_full` fills it with a ballast
  file until ``write`` fails with ENOSPC, and frees it afterwards;
* :func:`read_only` bind-mounts a folder onto itself read-only (EROFS inside it);
* :func:`immutable` sets ``chattr +i`` (EPERM even for root, who ignores permission bits);
* :func:`file_size_limit` lowers ``RLIMIT_FSIZE`` with ``SIGXFSZ`` ignored (EFBIG);
* :func:`as_user` runs as another user (``seteuid``), for EACCES on a root-only folder.

Each raises :class:`FaultUnavailable` when the machine cannot produce the fault (not root,
no ``CAP_SYS_ADMIN`` in a container, a file system without attributes), so a test can
skip with the reason instead of passing without having tested anything.

:func:`damage` breaks a file the way a crash or a bad disk would (truncated, emptied,
garbage in its footer or middle); :func:`add_equality_deletes` commits an equality-delete
file, which iceduck itself never writes.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from iceduck.io import fileio
from iceduck.io.object_store import is_object_store


class FaultUnavailable(Exception):
    """This machine cannot produce the fault (the message says why)."""


def _run(*command: str) -> None:
    if shutil.which(command[0]) is None:
        raise FaultUnavailable(f"{command[0]} is not installed")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise FaultUnavailable(f"{' '.join(command)} failed: {done.stderr.strip() or done.returncode}")


def _quietly(*command: str) -> None:
    subprocess.run(command, capture_output=True)


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "16m") -> Iterator[Path]:
    """A ``size`` tmpfs mounted on ``path`` (created) for the block; needs root and CAP_SYS_ADMIN."""
    if os.geteuid() != 0:
        raise FaultUnavailable("mounting a tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    _run("mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        _quietly("umount", "-l", str(path))


@contextlib.contextmanager
def disk_full(folder: Path, leave: int = 0) -> Iterator[Path]:
    """Fill the file system holding ``folder`` (a small tmpfs) to the last byte, then give
    back ``leave`` bytes (so a write fails part-way); freed after the block."""
    ballast = folder / f".ballast-{uuid.uuid4().hex}"
    chunk = b"\0" * 65536
    with open(ballast, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
        try:
            while True:  # the last partial block
                f.write(b"\0" * 512)
        except OSError:
            pass
    if leave:
        os.truncate(ballast, max(0, ballast.stat().st_size - leave))
    try:
        yield ballast
    finally:
        ballast.unlink()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` bind-mounted onto itself read-only for the block (EROFS inside it)."""
    if os.geteuid() != 0:
        raise FaultUnavailable("a read-only bind mount needs root")
    _run("mount", "--bind", str(folder), str(folder))
    try:
        _run("mount", "-o", "remount,bind,ro", str(folder))
        yield folder
    finally:
        _quietly("umount", "-l", str(folder))


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """``chattr +i`` on ``path`` for the block: nothing may be created in or changed there."""
    _run("chattr", "+i", str(path))
    try:
        yield path
    finally:
        _quietly("chattr", "-i", str(path))


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[int]:
    """This process may not write a file past ``limit`` bytes (EFBIG; SIGXFSZ ignored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


@contextlib.contextmanager
def as_user(uid: int = 65534) -> Iterator[int]:
    """Run the block with effective user ``uid`` (``nobody``): root's folders refuse it."""
    if os.geteuid() != 0:
        raise FaultUnavailable("switching users needs root")
    os.seteuid(uid)
    try:
        yield uid
    finally:
        os.seteuid(0)


# -- damaged files ---------------------------------------------------------------------------------

#: the ways :func:`damage` breaks a file
DAMAGES = ("truncated", "empty", "head-garbage", "footer-garbage", "middle-garbage", "tail-cut")


def damage(path: str | Path, how: str) -> bytes:
    """Break the file at ``path``; returns its original bytes (for :func:`restore`).

    ``truncated``: the first half only; ``empty``: no bytes; ``head-garbage``: 16 bytes
    after the 4-byte magic XORed (a Parquet page header, the first Puffin blob: a deletion
    vector); ``footer-garbage``: the Parquet footer (or the last quarter of any other
    file) overwritten with 0xff, the trailing length and magic kept; ``middle-garbage``: 64
    bytes in the middle XORed; ``tail-cut``: the last 8 bytes gone.
    """
    p = Path(path)
    data = p.read_bytes()
    n = len(data)
    if how == "truncated":
        bad = data[: n // 2]
    elif how == "empty":
        bad = b""
    elif how == "head-garbage":
        bad = data[:4] + bytes(b ^ 0x5A for b in data[4:20]) + data[20:]
    elif how == "footer-garbage":
        start = _footer_start(data)
        bad = data[:start] + b"\xff" * (n - 8 - start) + data[-8:]
    elif how == "middle-garbage":
        middle = bytearray(data)
        for i in range(n // 2, min(n, n // 2 + 64)):
            middle[i] ^= 0x5A
        bad = bytes(middle)
    elif how == "tail-cut":
        bad = data[:-8]
    else:
        raise ValueError(f"unknown damage {how!r}")
    p.write_bytes(bad)
    return data


def _footer_start(data: bytes) -> int:
    """Where a Parquet file's footer starts (the last quarter for any other file)."""
    n = len(data)
    if data[:4] == b"PAR1" and data[-4:] == b"PAR1" and n >= 12:
        length = int.from_bytes(data[-8:-4], "little")
        if 4 <= n - 8 - length < n - 8:
            return n - 8 - length
    return max(0, n - 8 - n // 4)


def restore(path: str | Path, data: bytes) -> None:
    Path(path).write_bytes(data)


# -- tables -----------------------------------------------------------------------------------------


def local(location: str) -> str:
    return location.removeprefix("file:")


def table_files(con: Any, table: str) -> dict[str, str]:
    """Local paths of one file of each kind of ``table``'s current snapshot: ``data``,
    ``delete`` (position or equality deletes, or the deletion vector's Puffin file),
    ``manifest``, ``manifest_list``, ``metadata``."""
    cur = con.cursor()
    found = {"data": cur.execute(f"SELECT file_path FROM {table}.data_files").fetchall()[0][0]}
    deletes = cur.execute(f"SELECT file_path FROM {table}.delete_files").fetchall()
    if deletes:
        found["delete"] = deletes[0][0]
    found["manifest"] = cur.execute(f"SELECT path FROM {table}.manifests").fetchall()[0][0]
    found["manifest_list"] = cur.execute(
        f"SELECT manifest_list FROM {table}.snapshots ORDER BY committed_at DESC, snapshot_id LIMIT 1"
    ).fetchall()[0][0]
    found["metadata"] = cur.execute(
        f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
    ).fetchall()[0][0]
    return {kind: local(path) for kind, path in found.items()}


def add_equality_deletes(con: Any, namespace: str, table: str, column: str, values: list[int]) -> str:
    """Commit one equality-delete file on bigint ``column`` (as Flink's upsert writer would);
    its path. iceduck reads equality deletes but never writes them."""
    from iceduck.catalog.base import TableIdentifier
    from iceduck.spec.manifest import DataFile, FileContent, FileFormat
    from iceduck.spec.snapshot import Operation
    from iceduck.txn.commit import commit
    from iceduck.txn.snapshot import SnapshotChanges, produce

    catalog = con.session.catalog
    identifier = TableIdentifier((namespace,), table)
    loaded = catalog.load_table(identifier)
    field_id = loaded.metadata.schema().find_field(column).field_id
    schema = pa.schema([pa.field(column, pa.int64(), metadata={b"PARQUET:field_id": str(field_id).encode()})])
    if is_object_store(loaded.metadata.location):  # a table in S3: the file goes there
        path = f"{loaded.metadata.location}/data/eq-{uuid.uuid4()}.parquet"
        buffer = io.BytesIO()
        pq.write_table(pa.table({column: pa.array(values, pa.int64())}, schema=schema), buffer)
        fileio.write_new(path, buffer.getvalue())
    else:
        path = f"{local(loaded.metadata.location)}/data/eq-{uuid.uuid4()}.parquet"
        pq.write_table(pa.table({column: pa.array(values, pa.int64())}, schema=schema), path)
    entry = DataFile(
        content=FileContent.EQUALITY_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=(),
        record_count=len(values),
        file_size_in_bytes=fileio.file_size(path),
        equality_ids=[field_id],
        spec_id=0,
    )
    changes = SnapshotChanges(Operation.DELETE, added_delete_files=(entry,))
    commit(
        catalog,
        identifier,
        lambda base: produce(
            base.metadata, changes, table_location=base.metadata.location, cache=con.session.manifests
        ),
    )
    return path

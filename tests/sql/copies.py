"""Test helper: a copy of a table's metadata, to damage without touching the original.

:func:`copy_metadata` copies the ``metadata/`` folder of a table and rewrites the paths
of metadata files inside it (metadata JSON, manifest lists, manifests; Avro records are
re-encoded with their own schema, codec and key-value metadata), so ``iceduck_scan`` of
the copy reads the copy's manifests -- which a test may corrupt -- while data and delete
files stay where they are, shared with the original and never modified. ``redirect``
makes chosen data or delete file paths point somewhere else in the copy, e.g. at a file
that does not exist.
"""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import fastavro

METADATA = "metadata"


def local(location: str) -> str:
    return location.removeprefix("file:").removeprefix("//")


def copy_metadata(location: str, target: Path, redirect: dict[str, str] | None = None) -> Path:
    """Copy the metadata of the table at ``location`` to ``target/metadata``; returns ``target``.

    ``redirect`` maps file paths, exactly as manifests spell them, to new paths.
    """
    source = Path(local(location))
    scheme = location[: len(location) - len(local(location))]
    old, new = f"{location}/{METADATA}/", f"{scheme}{target}/{METADATA}/"
    shutil.copytree(source / METADATA, target / METADATA)
    renames = dict(redirect or {})
    for f in (target / METADATA).iterdir():
        if f.name.endswith(".json"):
            f.write_text(f.read_text().replace(old, new))
        elif f.suffix == ".avro":
            f.write_bytes(_rewrite_avro(f.read_bytes(), old, new, renames))
    return target


def missing_path(target: Path, path: str) -> str:
    """A path in the copy's folder where no file exists, named after ``path``."""
    return f"{target}/missing/{Path(local(path)).name}"


def _rewrite_avro(data: bytes, old: str, new: str, renames: dict[str, str]) -> bytes:
    reader = fastavro.reader(io.BytesIO(data))
    schema = reader.writer_schema
    metadata = {k: v.decode() if isinstance(v, bytes) else v for k, v in reader.metadata.items()}
    records = [_rewrite(r, old, new, renames) for r in reader]
    codec = metadata.pop("avro.codec", "null")
    metadata.pop("avro.schema", None)
    out = io.BytesIO()
    fastavro.writer(out, schema, records, codec=codec, metadata=metadata)
    return out.getvalue()


def _rewrite(value: Any, old: str, new: str, renames: dict[str, str]) -> Any:
    if isinstance(value, str):
        return renames.get(value, value.replace(old, new) if value.startswith(old) else value)
    if isinstance(value, dict):
        return {k: _rewrite(v, old, new, renames) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(v, old, new, renames) for v in value]
    return value


def copy_of(path: str, location: str, target: Path) -> Path:
    """Where metadata file ``path`` of the original table is in the copy."""
    return target / METADATA / Path(local(path)).relative_to(Path(local(location)) / METADATA)

"""Reading a table with no catalog: from its metadata file or its folder (the table function).

A user may point iceduck at ``.../t/metadata/00003-….metadata.json`` (any metadata file,
plain or ``.gz.metadata.json``, the exact version they want), at the table folder ``.../t``,
or at its ``metadata/`` folder. A folder means its newest metadata, found from file names
(:func:`~iceduck.catalog.metadata_files.newest_metadata_file`: ``version-hint.text``,
else the highest version number of either naming scheme).

Without a catalog there is no commit to trust, so reading a folder is only as current as
its file names; naming the metadata file is exact.
"""

from __future__ import annotations

from pathlib import Path

from iceduck.catalog.base import LoadedTable, TableIdentifier
from iceduck.catalog.metadata_files import (
    METADATA_DIR,
    MetadataCache,
    is_metadata_file_name,
    newest_metadata_file,
    newest_metadata_name,
    read_metadata,
)
from iceduck.errors import NotFoundError
from iceduck.io.fileio import exists, to_local_path
from iceduck.io.listing import list_files
from iceduck.io.object_store import is_object_store


def load_table_from_path(path: str, cache: MetadataCache | None = None) -> LoadedTable:
    """The table whose metadata file, table folder or ``metadata/`` folder is ``path``.

    ``path`` may be a local path or a ``file:`` URI. The identifier is the table folder's
    name (the last part of the metadata's ``location``) in the root namespace. Errors: a
    path that does not exist, or a folder without metadata, is a :class:`NotFoundError`
    naming it; a damaged file is a :class:`~iceduck.errors.CorruptDataError` naming it.
    """
    if is_object_store(path):
        location = _object_store_metadata(path)
        metadata = cache.load(location) if cache is not None else read_metadata(location)
        name = metadata.location.rstrip("/").rsplit("/", 1)[-1]
        return LoadedTable(TableIdentifier((), name), location, metadata)
    local = Path(to_local_path(path))
    if local.is_dir():
        location = str(newest_metadata_file(_metadata_dir(local)))
    elif local.is_file():
        location = path
    else:
        raise NotFoundError(f"no Iceberg metadata file or table folder at {path}")
    metadata = cache.load(location) if cache is not None else read_metadata(location)
    name = metadata.location.rstrip("/").rsplit("/", 1)[-1]
    return LoadedTable(TableIdentifier((), name), location, metadata)


def _object_store_metadata(path: str) -> str:
    """The metadata file an object-store ``path`` names: the file itself, or the newest in
    the ``metadata/`` folder of the table folder (or the ``metadata/`` folder) it names."""
    if is_metadata_file_name(path.rsplit("/", 1)[-1]):
        if not exists(path):
            raise NotFoundError(f"no Iceberg metadata file at {path}")
        return path
    base = path.rstrip("/")
    for folder in (f"{base}/{METADATA_DIR}", base):
        names = [f.path.rsplit("/", 1)[-1] for f in list_files(folder)]
        if any(is_metadata_file_name(n) for n in names):
            return f"{folder}/{newest_metadata_name(names, folder)}"
    raise NotFoundError(f"no Iceberg metadata file or table folder at {path}")


def _metadata_dir(folder: Path) -> Path:
    """``folder/metadata`` for a table folder; ``folder`` itself when it holds the
    metadata files (the user named the ``metadata/`` folder)."""
    nested = folder / METADATA_DIR
    if nested.is_dir():
        return nested
    if any(p.is_file() and is_metadata_file_name(p.name) for p in folder.iterdir()):
        return folder
    raise NotFoundError(
        f"{folder} is not an Iceberg table folder: "
        f"it has no {METADATA_DIR}/ folder and no *.metadata.json file"
    )

"""Finding and reading a table's metadata files, shared by every catalog.

Three things live here because all catalogs need them:

* :class:`MetadataCache` -- parse each metadata file once. Metadata files are immutable
  (every commit writes a new one: spec, "Metastore Tables"/"File System Tables"), so a
  connection that loads the same table again pays one ``stat`` instead of a JSON parse.
  The key includes size and mtime, so a file rewritten in place (not something Iceberg
  writers do) is re-read rather than served stale.
* The file-system layout of Spark's Hadoop catalog (spec, "File System Tables": "Each
  version of table metadata is stored in a metadata folder under the table's base location
  using a file naming scheme that includes a version number, V: ``v<V>.metadata.json``"),
  and finding the newest metadata file of a table folder from file names alone.
* Writing the next metadata file of a commit: its name (Java's ``<NNNNN>-<uuid>``
  numbering), the ``metadata-log`` entry for the file it replaces, and deleting files
  that fell out of that log (``write.metadata.delete-after-commit.enabled``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import uuid
from pathlib import Path

from iceduck.errors import IceduckError, NotFoundError, UserError, ValidationError
from iceduck.formats.metadata_json import (
    GZIP_METADATA_SUFFIX,
    METADATA_SUFFIX,
    OLD_GZIP_METADATA_SUFFIX,
    is_gzip_metadata_name,
    metadata_file_name,
    metadata_file_version,
    read_table_metadata,
    write_table_metadata,
)
from iceduck.formats.view_metadata_json import parse_view_metadata, write_view_metadata
from iceduck.io.fileio import MissingFileError, delete, file_size, read_bytes, to_local_path, write_new
from iceduck.io.object_store import is_object_store
from iceduck.lru import LRUCache
from iceduck.spec import properties as props
from iceduck.spec import view_metadata as vm
from iceduck.spec.snapshot import MetadataLogEntry
from iceduck.spec.table_metadata import TableMetadata

METADATA_DIR = "metadata"
#: Java's ``Util.VERSION_HINT_FILENAME``: holds the current version number of a Hadoop table
VERSION_HINT = "version-hint.text"
#: Java's ``HadoopTableOperations.VERSION_PATTERN`` (``v([^\.]*)\..*``), digits only
_HADOOP_NAME = re.compile(r"v(\d+)\..*")
#: the name endings Java's ``HadoopTableOperations.getMetadataFile`` tries, in its order
#: (codec NONE, codec GZIP, then GZIP's old extension)
_HADOOP_SUFFIXES = (METADATA_SUFFIX, GZIP_METADATA_SUFFIX, OLD_GZIP_METADATA_SUFFIX)


def read_metadata(location: str) -> TableMetadata:
    """Parse one metadata file (plain or GZIP); errors name the file."""
    return read_table_metadata(read_bytes(location), location)


class MetadataCache:
    """Parsed metadata files, least recently used dropped first, keyed by location, size and
    mtime (a small :class:`~iceduck.lru.LRUCache`: a connection loads few tables)."""

    def __init__(self, capacity: int = 128) -> None:
        self._entries: LRUCache[tuple[str, int, int], TableMetadata] = LRUCache(capacity)
        #: the object-store locations held, with their sizes
        self._objects: LRUCache[str, int] = LRUCache(capacity)

    def load(self, location: str) -> TableMetadata:
        if is_object_store(location):
            return self._load_object(location)
        cached = self._entries.get(key := _local_key(location))
        if cached is not None:
            return cached
        metadata = read_metadata(location)
        self._entries.put(key, metadata)
        return metadata

    def _load_object(self, location: str) -> TableMetadata:
        """An object is never replaced in place (write_new): its size suffices as the check.
        A location not held is read at once, its size taken from the bytes read: asking the
        size first would be one more request (10-30 ms in a real store) for nothing."""
        if self._objects.get(location) is not None:
            key = (location, file_size(location), 0)
            cached = self._entries.get(key)
            if cached is not None:
                return cached
        raw = read_bytes(location)
        metadata = read_table_metadata(raw, location)
        self._entries.put((location, len(raw), 0), metadata)
        self._objects.put(location, len(raw))
        return metadata

    def write(self, location: str, metadata: TableMetadata) -> TableMetadata:
        """:func:`write_metadata_file`, remembering the metadata under the new file's key, so
        loading the table after its commit (the next statement's refresh) does not read and
        parse the file just written. What is remembered is what the file holds: the metadata
        written, as :func:`write_metadata_file` returns it (its recorded changes dropped), and
        it is found only by this location, size and mtime."""
        written = write_metadata_file(location, metadata)
        if not is_object_store(location):  # an object's size would cost a request to learn
            self._entries.put(_local_key(location), written)
        return written


def _local_key(location: str) -> tuple[str, int, int]:
    """What a parsed local metadata file is cached under: its location, size and mtime."""
    try:
        st = os.stat(to_local_path(location))
    except FileNotFoundError:
        raise MissingFileError("file does not exist", location) from None
    return (location, st.st_size, st.st_mtime_ns)


# -- the Hadoop (file-system) table layout ------------------------------------------------


def is_metadata_file_name(name: str) -> bool:
    """Java's ``HadoopCatalog.TABLE_FILTER`` (``.metadata.json``), plus the old GZIP name."""
    return name.endswith((METADATA_SUFFIX, OLD_GZIP_METADATA_SUFFIX))


def has_metadata_files(table_dir: Path) -> bool:
    """Java's ``HadoopCatalog.isTableDir``: ``metadata/`` holds at least one metadata file."""
    try:
        with os.scandir(table_dir / METADATA_DIR) as it:
            return any(e.is_file() and is_metadata_file_name(e.name) for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


def hadoop_metadata_file(metadata_dir: Path, version: int) -> Path | None:
    """``v<version>.metadata.json`` (or a GZIP name) if it exists (``getMetadataFile``)."""
    for suffix in _HADOOP_SUFFIXES:
        candidate = metadata_dir / f"v{version}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def read_version_hint(metadata_dir: Path) -> int | None:
    """The version in ``version-hint.text``, or None if missing or unreadable."""
    try:
        text = (metadata_dir / VERSION_HINT).read_text("utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnicodeDecodeError):
        return None
    first_line = text.splitlines()[0].strip() if text.strip() else ""
    return int(first_line) if first_line.isdigit() else None


def _highest_hadoop_version(metadata_dir: Path) -> int:
    """The highest ``v<N>`` with a metadata file, 0 if none (``findVersion``'s fallback)."""
    best = 0
    try:
        with os.scandir(metadata_dir) as it:
            for entry in it:
                m = _HADOOP_NAME.fullmatch(entry.name)
                if m and int(m.group(1)) > best and hadoop_metadata_file(metadata_dir, int(m.group(1))):
                    best = int(m.group(1))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    return best


def current_hadoop_metadata_file(metadata_dir: Path) -> Path | None:
    """The current metadata file of a Hadoop-catalog table, None if it has none.

    As Java's ``HadoopTableOperations.refresh``: start at the version in
    ``version-hint.text`` (or, when the hint is missing or unreadable, at the highest
    ``v<N>`` listed in the folder), then move forward while ``v<N+1>`` exists, because the
    hint is written after the metadata file and may lag behind it. Where Java fails on a
    hint naming a missing file, we fall back to the listing: it can only find a file that
    a writer committed.
    """
    version = read_version_hint(metadata_dir)
    current = None if version is None else hadoop_metadata_file(metadata_dir, version)
    if version is None or current is None:
        version = _highest_hadoop_version(metadata_dir)
        current = hadoop_metadata_file(metadata_dir, version)
        if current is None:
            return None
    while (following := hadoop_metadata_file(metadata_dir, version + 1)) is not None:
        version, current = version + 1, following
    return current


def newest_metadata_file(metadata_dir: Path) -> Path:
    """The newest metadata file in a table's ``metadata/`` folder, from names alone.

    A ``version-hint.text`` naming an existing file decides, as in a Hadoop table. Otherwise the highest
    version number wins among both naming schemes: ``<NNNNN>-<uuid>.metadata.json``
    (metastore catalogs) and ``v<N>.metadata.json`` (Hadoop), GZIP variants included.
    Two different files with the highest number (a metastore writer that lost a commit
    race may leave its file behind) are refused as ambiguous rather than guessed.
    """
    hint = read_version_hint(metadata_dir)
    if hint is not None and hadoop_metadata_file(metadata_dir, hint) is not None:
        hinted = current_hadoop_metadata_file(metadata_dir)
        if hinted is not None:
            return hinted
    try:
        names = [e.name for e in os.scandir(metadata_dir) if e.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        raise NotFoundError(f"no table metadata folder at {metadata_dir}") from None
    return metadata_dir / newest_metadata_name(names, str(metadata_dir))


def newest_metadata_name(names: list[str], metadata_dir: str) -> str:
    """The newest of the file ``names`` of a ``metadata/`` folder (see
    :func:`newest_metadata_file`; an object store's folder has no version hint to read)."""
    versions: dict[str, int] = {}
    for name in names:
        version = metadata_file_version(name) if is_metadata_file_name(name) else None
        if version is not None:
            versions[name] = version
    if not versions:
        raise NotFoundError(f"no metadata file (*.metadata.json with a version number) in {metadata_dir}")
    top = max(versions.values())
    newest = sorted(name for name, v in versions.items() if v == top)
    if len(newest) > 1:
        raise UserError(
            f"{metadata_dir}: ambiguous current metadata, {len(newest)} files have version {top} "
            f"({', '.join(newest)}); name the metadata file to read"
        )
    return newest[0]


# -- writing new metadata files (every catalog's commit) ----------------------------------------


def next_metadata_location(metadata: TableMetadata, base_location: str | None) -> str:
    """Where a metastore catalog writes the next metadata file of a table.

    As Java's ``BaseMetastoreTableOperations.writeNewMetadataIfRequired``: the file is
    ``<write.metadata.path or location/metadata>/<NNNNN>-<uuid>.metadata.json`` whose number
    is the base file's number + 1 (0 for a new table, or when the base name carries no
    number), ``.gz.metadata.json`` when ``write.metadata.compression-codec`` is ``gzip``.
    """
    base_version = metadata_file_version(base_location) if base_location else None
    version = 0 if base_version is None else base_version + 1
    folder = props.metadata_location(metadata.properties, metadata.location)
    return f"{folder}/{metadata_file_name(version, compress=compress_metadata(metadata))}"


def compress_metadata(metadata: TableMetadata) -> bool:
    """Whether ``write.metadata.compression-codec`` asks for GZIP (Java accepts ``none``/``gzip``)."""
    codec = (
        props.str_property(
            metadata.properties, props.METADATA_COMPRESSION, props.METADATA_COMPRESSION_DEFAULT
        )
        .strip()
        .lower()
    )
    if codec not in props.METADATA_COMPRESSION_CODECS:
        raise ValidationError(
            f"table property {props.METADATA_COMPRESSION!r} must be 'none' or 'gzip', not {codec!r}"
        )
    return codec == "gzip"


def write_metadata_file(location: str, metadata: TableMetadata) -> TableMetadata:
    """Write ``metadata`` as a new file at ``location``: atomic, never overwriting (a file
    that exists is another writer's commit), GZIP when the location's name says so. The
    metadata as the file now holds it: with no recorded changes, since the file is where
    the next commit's changes start from."""
    write_new(location, write_table_metadata(metadata, compress=is_gzip_metadata_name(location)))
    return dataclasses.replace(metadata, changes=()) if metadata.changes else metadata


def with_previous_file(metadata: TableMetadata, base: TableMetadata, base_location: str) -> TableMetadata:
    """``metadata`` with the base file appended to its ``metadata-log`` (and a table UUID).

    Java's ``TableMetadata.Builder.addPreviousFile``: the entry's timestamp is the base's
    ``last-updated-ms``; the log keeps at most ``write.metadata.previous-versions-max``
    entries (at least 1) counting the new one, dropping the oldest. The spec: "metadata-log
    ... A list (optional) of timestamp and metadata file location pairs that encodes changes
    to the previous metadata files for the table."
    """
    if metadata.table_uuid is None:  # old v1 files may lack one: Java's commit assigns it
        metadata = dataclasses.replace(metadata, table_uuid=str(uuid.uuid4()))
    log = list(metadata.metadata_log)
    if log and log[-1].metadata_file == base_location:
        return metadata  # the caller already recorded it
    max_size = max(
        1,
        props.int_property(
            metadata.properties,
            props.METADATA_PREVIOUS_VERSIONS_MAX,
            props.METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT,
        ),
    )
    if len(log) >= max_size:
        log = log[len(log) - max_size + 1 :]
    log.append(MetadataLogEntry(base.last_updated_ms, base_location))
    return dataclasses.replace(metadata, metadata_log=tuple(log))


def delete_removed_metadata_files(base: TableMetadata, committed: TableMetadata) -> None:
    """After a commit, delete the metadata files that fell out of the ``metadata-log``, when
    ``write.metadata.delete-after-commit.enabled`` is true (Java's
    ``deleteRemovedMetadataFiles``). Best effort: the commit has landed, so a file that
    cannot be deleted is only left behind, never an error."""
    enabled = props.bool_property(
        committed.properties,
        props.METADATA_DELETE_AFTER_COMMIT_ENABLED,
        props.METADATA_DELETE_AFTER_COMMIT_ENABLED_DEFAULT,
    )
    if not enabled:
        return
    kept = {e.metadata_file for e in committed.metadata_log}
    for entry in base.metadata_log:
        if entry.metadata_file not in kept:
            delete_quietly(entry.metadata_file)


def delete_quietly(location: str) -> None:
    """Delete a file, ignoring every failure (cleanup after the fact must not mask the
    outcome the caller is reporting)."""
    try:
        delete(location)
    except (OSError, IceduckError):
        pass


# -- view metadata files ----------------------------------------------------------------------


def read_view_metadata(location: str) -> vm.ViewMetadata:
    """Parse one view metadata file (plain or GZIP, whatever its name); errors name the file."""
    return parse_view_metadata(read_bytes(location), location)


def next_view_metadata_location(metadata: vm.ViewMetadata, base_location: str | None) -> str:
    """Where the next metadata file of a view goes, as Java's
    ``BaseViewOperations.newMetadataFilePath``: ``<write.metadata.path or
    location/metadata>/<NNNNN>-<uuid><ext>``, numbered one past the base file's number (0 for
    a new view or a base name without one), ``.gz.metadata.json`` unless
    ``write.metadata.compression-codec`` is ``none``: views default to GZIP in Java
    (``ViewProperties.METADATA_COMPRESSION_DEFAULT = "gzip"``), tables do not."""
    base_version = metadata_file_version(base_location) if base_location else None
    version = 0 if base_version is None else base_version + 1
    folder = metadata.properties.get(vm.WRITE_METADATA_LOCATION)
    folder = folder.rstrip("/") if folder else f"{metadata.location.rstrip('/')}/{METADATA_DIR}"
    return f"{folder}/{metadata_file_name(version, compress=compress_view_metadata(metadata))}"


def compress_view_metadata(metadata: vm.ViewMetadata) -> bool:
    """Whether the view's ``write.metadata.compression-codec`` (default ``gzip``) is GZIP."""
    codec = metadata.properties.get(vm.METADATA_COMPRESSION, vm.METADATA_COMPRESSION_DEFAULT).strip().lower()
    if codec not in props.METADATA_COMPRESSION_CODECS:
        raise ValidationError(
            f"view property {vm.METADATA_COMPRESSION!r} must be 'none' or 'gzip', not {codec!r}"
        )
    return codec == "gzip"


def write_view_metadata_file(metadata: vm.ViewMetadata, base_location: str | None) -> str:
    """Write ``metadata`` as the view's next metadata file (after the file at
    ``base_location``, None for a new view); its location. Never overwrites: the name holds
    a fresh UUID."""
    location = next_view_metadata_location(metadata, base_location)
    write_new(location, write_view_metadata(metadata, compress=is_gzip_metadata_name(location)))
    return location

"""Copy a table by rewriting all of its metadata with iceduck's writers.

:func:`rewrite_table` reads a table's metadata JSON, every snapshot's manifest list and
every manifest with iceduck, and writes each of them again -- from the model, through
:func:`write_manifest`, :func:`write_manifest_list` and :func:`write_table_metadata` -- into
a new table folder. Data files, delete files and deletion-vector Puffin files are not
copied: entries keep their absolute paths, so the copy reads the original's data.

A reference engine that reads the copy as it reads the original proves that iceduck's
metadata writers produce files the engine parses identically (see
``tests/interop/test_spark_reads_rewritten_metadata.py``).

What the copy changes on purpose, and why:

* ``location``: the new folder; ``table-uuid``: a fresh one (the copy is another table);
* each snapshot's ``manifest-list`` and each list row's ``manifest_path`` and
  ``manifest_length``: the rewritten files;
* ``metadata-log``: emptied, since the logged files belong to the original table.

Everything else (schemas, specs, sort orders, refs, snapshot log, properties,
``next-row-id``, sequence numbers, counts, partition summaries, first row ids,
statistics files) is carried through unchanged.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field

from iceduck.formats.manifest_list import open_manifest_list, write_manifest_list
from iceduck.formats.manifests import read_manifest, write_manifest
from iceduck.formats.metadata_json import (
    metadata_file_name,
    metadata_file_version,
    read_table_metadata,
    write_table_metadata,
)
from iceduck.io import fileio
from iceduck.spec.manifest import ManifestEntry, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata


@dataclass(frozen=True)
class RewrittenManifest:
    """One manifest rewritten: the original's list row, the row iceduck's writer computed
    for the new file, and the entries as stored (no inheritance) in the original."""

    original: ManifestFile
    written: ManifestFile
    entries: list[ManifestEntry] = field(repr=False)


@dataclass
class RewrittenTable:
    """The result of :func:`rewrite_table`."""

    original_metadata_location: str
    metadata_location: str
    metadata: TableMetadata
    #: original manifest path -> its rewrite
    manifests: dict[str, RewrittenManifest] = field(default_factory=dict)
    #: original manifest list path -> new path
    manifest_lists: dict[str, str] = field(default_factory=dict)


def rewrite_table(metadata_location: str, new_location: str) -> RewrittenTable:
    """Write a copy of the table whose current metadata file is ``metadata_location`` into
    the folder ``new_location`` (which must not hold files of the same names)."""
    md = read_table_metadata(fileio.read_bytes(metadata_location), metadata_location)
    folder = f"{new_location.rstrip('/')}/metadata"
    out = RewrittenTable(metadata_location, "", md)
    specs = md.specs_by_id()
    snapshots = tuple(_rewrite_snapshot(s, md, specs, folder, out) for s in md.snapshots)
    new_md = dataclasses.replace(
        md,
        table_uuid=str(uuid.uuid4()),
        location=new_location.rstrip("/"),
        snapshots=snapshots,
        metadata_log=(),
    )
    version = metadata_file_version(metadata_location) or 0
    out.metadata_location = f"{folder}/{metadata_file_name(version)}"
    fileio.write_new(out.metadata_location, write_table_metadata(new_md))
    out.metadata = new_md
    return out


def _file_name(location: str) -> str:
    return location.rsplit("/", 1)[-1]


def _rewrite_snapshot(
    snapshot: Snapshot,
    md: TableMetadata,
    specs: dict[int, PartitionSpec],
    folder: str,
    out: RewrittenTable,
) -> Snapshot:
    """Rewrite a snapshot's manifests (once each: snapshots share them) and its list."""
    old_list = snapshot.manifest_list
    if old_list is None:
        raise AssertionError(f"snapshot {snapshot.snapshot_id} has no manifest list (v1 'manifests')")
    listing = open_manifest_list(fileio.read_bytes(old_list), old_list, md.format_version)
    rows = []
    for mf in listing.manifests:
        if mf.manifest_path not in out.manifests:
            out.manifests[mf.manifest_path] = _rewrite_manifest(mf, specs, folder)
        written = out.manifests[mf.manifest_path].written
        rows.append(
            dataclasses.replace(
                mf, manifest_path=written.manifest_path, manifest_length=written.manifest_length
            )
        )
    new_list = f"{folder}/{_file_name(old_list)}"
    data = write_manifest_list(
        rows,
        listing.format_version,
        snapshot.snapshot_id,
        snapshot.parent_snapshot_id,
        snapshot.sequence_number if listing.format_version >= 2 else None,
        snapshot.first_row_id if listing.format_version >= 3 else None,
    )
    fileio.write_new(new_list, data)
    out.manifest_lists[old_list] = new_list
    return dataclasses.replace(snapshot, manifest_list=new_list)


def _rewrite_manifest(mf: ManifestFile, specs: dict[int, PartitionSpec], folder: str) -> RewrittenManifest:
    """Read a manifest as stored and write it from the model: the schema and spec JSON of
    the new file come from iceduck's model, not from the original's text."""
    old = mf.manifest_path
    meta, entries = read_manifest(fileio.read_bytes(old), old, mf, specs, inherit=False)
    new = f"{folder}/{_file_name(old)}"
    data, written = write_manifest(
        entries,
        meta.spec,
        meta.schema,
        meta.format_version,
        meta.content,
        mf.added_snapshot_id,
        path=new,
        first_row_id=mf.first_row_id,
        partition_type=meta.partition_type,
    )
    fileio.write_new(new, data)
    return RewrittenManifest(mf, written, entries)

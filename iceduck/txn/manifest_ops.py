"""Manifests of a new snapshot: new manifests for added files, rewrites of manifests that
hold removed files, and the manifests carried over untouched.

The model is Java's ``MergingSnapshotProducer`` with its ``ManifestFilterManager``:

* "A manifest stores files for a single partition spec" and "may store either data files
  or delete files, but not both": added files go to one new manifest per (content, spec).
  Their entries are ADDED with null sequence numbers ("New data and metadata file entries
  are written with ``null`` in place of a sequence number, which is replaced with the
  manifest's sequence number at read time").
* A manifest holding a removed file is rewritten: the removed entry becomes DELETED with the
  new snapshot's id ("When a file is replaced or deleted from the dataset, its manifest
  entry fields store the snapshot ID in which the file was deleted and status 2"), the
  other live entries become EXISTING, and both keep their data and file sequence numbers
  ("If the entry status is 0 (existing) or 2 (deleted), the entry must include both
  sequence numbers explicitly") and, for data files, their ``first_row_id`` ("The inherited
  value of ``first_row_id`` must be written into data file metadata when creating existing
  and deleted entries"). DELETED entries of older snapshots are dropped, as Java does.
* Manifests without live files that this commit did not write are left out of the list.
* In v3, removing a data file also removes the deletion vectors that reference it (Java's
  ``removeDanglingDeletesFor``): a DV of a file that is gone must not linger.

The manifests built here are then merged as Java's ``ManifestMergeManager`` does (see
:mod:`iceduck.txn.manifest_merge`).

Names are Java's: ``<metadata dir>/<commit uuid>-m<N>.avro`` for manifests and
``snap-<snapshot id>-<attempt>-<commit uuid>.avro`` for the manifest list.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from iceduck.errors import ValidationError
from iceduck.formats.manifest_writer import write_manifest_raw
from iceduck.formats.schema_json import partition_fields_to_json, schema_to_json
from iceduck.io import fileio
from iceduck.scan.manifest_cache import CachedManifest, ManifestCache, referenced_data_file
from iceduck.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.schema import Schema
from iceduck.txn.summary import is_deletion_vector

#: a delete file to remove: its path (every entry with that path) or (path, referenced data
#: file) -- "a DV is identified by (puffin path, referenced_data_file)" since one Puffin file
#: holds the DVs of many data files
DeleteKey = str | tuple[str, str | None]


@dataclass
class FileWriter:
    """Names and writes the files of one commit attempt, remembering each for cleanup."""

    metadata_dir: str
    commit_uuid: str
    written: list[str] = field(default_factory=list)
    _count: int = 0

    def next_manifest_path(self) -> str:
        path = f"{self.metadata_dir}/{self.commit_uuid}-m{self._count}.avro"
        self._count += 1
        return path

    def manifest_list_path(self, snapshot_id: int, attempt: int = 1) -> str:
        return f"{self.metadata_dir}/snap-{snapshot_id}-{attempt}-{self.commit_uuid}.avro"

    def write(self, path: str, data: bytes) -> None:
        fileio.write_new(path, data)
        self.written.append(path)

    def discard(self, path: str) -> None:
        """Delete a file this attempt wrote that the commit no longer refers to (a manifest
        merged into another): nothing else can refer to it, so it goes at once."""
        self.written.remove(path)
        fileio.delete(path)

    def delete_written(self) -> None:
        """Best-effort cleanup of everything written so far."""
        for path in self.written:
            fileio.delete(path)
        self.written.clear()


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# -- new manifests ---------------------------------------------------------------------------


def group_by_spec(files: Iterable[DataFile]) -> dict[int, list[DataFile]]:
    """Files per partition spec id, specs in order of first appearance."""
    out: dict[int, list[DataFile]] = {}
    for f in files:
        out.setdefault(f.spec_id, []).append(f)
    return out


def write_added_manifests(
    files: Sequence[DataFile],
    content: ManifestContent,
    *,
    specs: dict[int, PartitionSpec],
    schema: Schema,
    format_version: int,
    snapshot_id: int,
    writer: FileWriter,
    sequence_number: int | None = None,
) -> list[ManifestFile]:
    """One new manifest per partition spec holding ``files`` as ADDED entries (with an
    explicit data sequence number when ``sequence_number`` is given; the file sequence
    number is always inherited)."""
    out = []
    for spec_id, group in group_by_spec(files).items():
        spec = specs.get(spec_id)
        if spec is None:
            raise ValidationError(
                f"file {group[0].file_path} names partition spec {spec_id}, which the table does not have"
            )
        for f in group:
            if (f.content is FileContent.DATA) != (content is ManifestContent.DATA):
                raise ValidationError(
                    f"{f.file_path} is a {f.content.name} file, expected "
                    f"{'data' if content is ManifestContent.DATA else 'delete'} files"
                )
        entries = [ManifestEntry(EntryStatus.ADDED, snapshot_id, f, sequence_number) for f in group]
        path = writer.next_manifest_path()
        data, row = write_manifest_raw(
            entries,
            partition_type=spec.partition_type(schema),
            spec_id=spec_id,
            schema_json=_compact(schema_to_json(schema)),
            partition_spec_json=_compact(partition_fields_to_json(spec)),
            format_version=format_version,
            content=content,
            snapshot_id=snapshot_id,
            path=path,
        )
        writer.write(path, data)
        out.append(row)
    return out


# -- removing files from existing manifests ------------------------------------------------


@dataclass
class Removals:
    """What to drop from the branch head: data file paths and delete file keys."""

    data_paths: frozenset[str] = frozenset()
    delete_paths: frozenset[str] = frozenset()
    delete_pairs: frozenset[tuple[str, str | None]] = frozenset()
    #: v3: DVs referencing a removed data file go too
    drop_dangling_dvs: bool = False
    #: keys matched so far (a DeleteKey per removed delete, a path per removed data file)
    found_data: set[str] = field(default_factory=set)
    found_deletes: set[DeleteKey] = field(default_factory=set)

    @classmethod
    def of(cls, data_paths: Iterable[str], delete_keys: Iterable[DeleteKey], format_version: int) -> Removals:
        keys = list(delete_keys)
        return cls(
            data_paths=frozenset(data_paths),
            delete_paths=frozenset(k for k in keys if isinstance(k, str)),
            delete_pairs=frozenset(k for k in keys if not isinstance(k, str)),
            drop_dangling_dvs=format_version >= 3,
        )

    def wanted(self, content: ManifestContent) -> bool:
        if content is ManifestContent.DATA:
            return bool(self.data_paths)
        return bool(self.delete_paths or self.delete_pairs or (self.drop_dangling_dvs and self.data_paths))

    def matches(self, f: DataFile) -> bool:
        """Whether the live file ``f`` is to be removed (records the match)."""
        if f.content is FileContent.DATA:
            if f.file_path in self.data_paths:
                self.found_data.add(f.file_path)
                return True
            return False
        if f.file_path in self.delete_paths:
            self.found_deletes.add(f.file_path)
            return True
        ref = referenced_data_file(f)
        if (f.file_path, ref) in self.delete_pairs:
            self.found_deletes.add((f.file_path, ref))
            return True
        return self.drop_dangling_dvs and is_deletion_vector(f) and ref in self.data_paths

    def missing_data(self) -> list[str]:
        return sorted(self.data_paths - self.found_data)

    def missing_deletes(self) -> list[str]:
        keys: list[DeleteKey] = [*self.delete_paths, *self.delete_pairs]
        return sorted(str(k) for k in keys if k not in self.found_deletes)


@dataclass
class FilteredManifests:
    """The manifests of the head after removals, and the files removed."""

    manifests: list[ManifestFile]
    removed: list[DataFile]


def filter_manifests(
    manifests: Sequence[ManifestFile],
    removals: Removals,
    *,
    cache: ManifestCache,
    specs: dict[int, PartitionSpec],
    format_version: int,
    snapshot_id: int,
    writer: FileWriter,
) -> FilteredManifests:
    """Carry, rewrite or drop each manifest of the branch head (rules: module docstring)."""
    kept: list[ManifestFile] = []
    removed: list[DataFile] = []
    for m in manifests:
        if removals.wanted(m.content) and (m.has_added_files() or m.has_existing_files()):
            cm = cache.parsed_manifest(m, specs)
            hits = [e for e in cm.live if removals.matches(e.data_file)]
            if hits:
                kept.append(_rewrite(cm, {id(e) for e in hits}, format_version, snapshot_id, writer))
                removed.extend(e.data_file for e in hits)
                continue
        if m.has_added_files() or m.has_existing_files():
            kept.append(m)
    return FilteredManifests(kept, removed)


def _rewrite(
    cm: CachedManifest, removed_ids: set[int], format_version: int, snapshot_id: int, writer: FileWriter
) -> ManifestFile:
    """A copy of manifest ``cm`` with the removed entries DELETED and the others EXISTING
    (its own partition type, spec and schema JSON: the spec's source columns may be gone)."""
    meta = cm.meta
    out = []
    for e in cm.entries:
        if not e.is_live:
            continue  # DELETED by an older snapshot: Java keeps only live entries
        if id(e) in removed_ids:
            out.append(dataclasses.replace(e, status=EntryStatus.DELETED, snapshot_id=snapshot_id))
        else:
            out.append(dataclasses.replace(e, status=EntryStatus.EXISTING))
    path = writer.next_manifest_path()
    data, row = write_manifest_raw(
        out,
        partition_type=meta.partition_type,
        spec_id=meta.spec_id,
        schema_json=meta.schema_json,
        partition_spec_json=meta.partition_spec_json,
        format_version=format_version,
        content=meta.content,
        snapshot_id=snapshot_id,
        path=path,
    )
    writer.write(path, data)
    return row


def live_data_files(
    manifests: Sequence[ManifestFile], cache: ManifestCache, specs: dict[int, PartitionSpec]
) -> dict[str, DataFile]:
    """Path -> live data file of a snapshot's data manifests."""
    out: dict[str, DataFile] = {}
    for m in manifests:
        if m.content is ManifestContent.DATA and (m.has_added_files() or m.has_existing_files()):
            for e in cache.parsed_manifest(m, specs).live:
                out[e.data_file.file_path] = e.data_file
    return out


def split_by_content(manifests: Iterable[ManifestFile]) -> tuple[list[ManifestFile], list[ManifestFile]]:
    data: list[ManifestFile] = []
    deletes: list[ManifestFile] = []
    for m in manifests:
        (data if m.content is ManifestContent.DATA else deletes).append(m)
    return data, deletes

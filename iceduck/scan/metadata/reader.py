"""Where metadata tables get manifest lists and manifests from.

Metadata tables read the same immutable files as scan planning, so a session hands in its
per-connection :class:`iceduck.scan.manifest_cache.ManifestCache`, which is a
:class:`ManifestSource` as it is; without one, :class:`DirectManifestSource` reads and
parses the files each time.
"""

from __future__ import annotations

from typing import Protocol

from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.io.fileio import file_size, read_bytes
from iceduck.spec.manifest import ManifestEntry, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.snapshot import Snapshot


class ManifestSource(Protocol):
    """Parsed manifest lists and manifests (entries with inherited values resolved, DELETED
    entries included); both are called with positional arguments only."""

    def manifest_list(self, path: str, format_version: int | None = None, /) -> list[ManifestFile]: ...

    def manifest(
        self, manifest_file: ManifestFile, specs_by_id: dict[int, PartitionSpec], /
    ) -> list[ManifestEntry]: ...


class DirectManifestSource:
    """Reads every file from storage, no caching."""

    def manifest_list(self, path: str, format_version: int | None = None) -> list[ManifestFile]:
        """``format_version``: the table's, for manifest lists that do not record theirs."""
        return read_manifest_list(read_bytes(path), path, format_version)

    def manifest(
        self, manifest_file: ManifestFile, specs_by_id: dict[int, PartitionSpec]
    ) -> list[ManifestEntry]:
        path = manifest_file.manifest_path
        return read_manifest(read_bytes(path), path, manifest_file, specs_by_id).entries


def snapshot_manifests(
    snapshot: Snapshot, source: ManifestSource, format_version: int | None = None
) -> list[ManifestFile]:
    """The manifests of a snapshot (Java ``Snapshot.allManifests``).

    v1 snapshots may list manifest locations directly ("manifests" instead of a manifest
    list); those get a row like Java's ``GenericManifestFile(file, specId 0)``: the file's
    length, spec 0 (the reader takes the real one from the manifest's metadata), the
    snapshot as adder and unknown counts.
    """
    if snapshot.manifest_list is not None:
        return source.manifest_list(snapshot.manifest_list, format_version)
    return [
        ManifestFile(
            manifest_path=path,
            manifest_length=file_size(path),
            partition_spec_id=0,
            added_snapshot_id=snapshot.snapshot_id,
        )
        for path in snapshot.manifests or ()
    ]

"""The pypaimon-written tables of ``tests/fixtures/paimon`` (see its ``generate.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from iceduck.formats.paimon.manifests import read_manifest, read_manifest_list
from iceduck.spec.paimon.manifest import ManifestEntry, live_files
from iceduck.spec.paimon.snapshot import Snapshot

DATABASE = Path(__file__).resolve().parents[2] / "fixtures" / "paimon" / "wh" / "db.db"


def table(name: str) -> str:
    return str(DATABASE / name)


def copy_table(name: str, tmp_path: Path) -> str:
    """A copy of a fixture table to break."""
    target = tmp_path / name
    shutil.copytree(DATABASE / name, target)
    return str(target)


def files_of(location: str, snapshot: Snapshot) -> list[ManifestEntry]:
    """The live files of a snapshot: its base and delta manifest lists, merged."""
    entries: list[ManifestEntry] = []
    for manifest_list in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
        for meta in read_manifest_list(location, manifest_list):
            entries += read_manifest(location, meta.file_name)
    return live_files(entries)

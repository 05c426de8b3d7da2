"""Print what an Iceberg table's metadata says: schema, partitioning, snapshots, manifests.

    python3 examples/inspect_table.py PATH

PATH is a metadata JSON file or a table folder (its newest ``metadata/*.metadata.json`` is
used: ``version-hint.text`` for Hadoop tables, else the highest version number). Works on
tables written by Spark, PyIceberg or iceduck; reads only metadata, never data files.
"""

from __future__ import annotations

import sys
from pathlib import Path

from iceduck.formats.manifest_list import read_manifest_list
from iceduck.formats.manifests import read_manifest
from iceduck.formats.metadata_json import metadata_file_version, read_table_metadata
from iceduck.io import fileio
from iceduck.spec.table_metadata import TableMetadata


def newest_metadata_file(table_dir: Path) -> Path:
    metadata_dir = table_dir / "metadata"
    hint = metadata_dir / "version-hint.text"
    if hint.is_file():
        return metadata_dir / f"v{hint.read_text().strip()}.metadata.json"
    files = [p for p in metadata_dir.glob("*.metadata.json") if metadata_file_version(str(p)) is not None]
    if not files:
        raise SystemExit(f"no metadata files in {metadata_dir}")
    return max(files, key=lambda p: metadata_file_version(str(p)) or 0)


def describe(md: TableMetadata) -> None:
    print(f"format v{md.format_version}  uuid {md.table_uuid}\nlocation {md.location}")
    print("schema:")
    for field in md.schema().fields:
        print(f"  {field}")
    print(f"partition spec {md.default_spec_id}:")
    for pf in md.spec().fields:
        print(f"  {pf.name} = {pf.transform}(field {pf.source_id})")
    for name, ref in sorted(md.refs.items()):
        print(f"ref {name}: {ref.type.value} -> {ref.snapshot_id}")
    for snap in md.snapshots:
        print(f"snapshot {snap.snapshot_id} seq {snap.sequence_number} {snap.operation}")
    snapshot = md.current_snapshot()
    if snapshot is None or snapshot.manifest_list is None:
        print("no current snapshot")
        return
    specs = md.specs_by_id()
    for manifest in read_manifest_list(fileio.read_bytes(snapshot.manifest_list), snapshot.manifest_list):
        entries = read_manifest(
            fileio.read_bytes(manifest.manifest_path), manifest.manifest_path, manifest, specs
        ).entries
        live = [e for e in entries if e.is_live]
        rows = sum(e.data_file.record_count for e in live)
        print(
            f"manifest {Path(manifest.manifest_path).name} ({manifest.content.name.lower()}, "
            f"spec {manifest.partition_spec_id}): {len(live)} live files, {rows} rows"
        )
        for entry in live:
            f = entry.data_file
            kind = f.content.name.lower()
            print(f"  {kind:17} {Path(f.file_path).name} partition={f.partition} rows={f.record_count}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(argv[1])
    path = newest_metadata_file(target) if target.is_dir() else target
    describe(read_table_metadata(fileio.read_bytes(str(path)), str(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

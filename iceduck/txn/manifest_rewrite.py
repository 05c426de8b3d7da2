"""Rewriting a snapshot's manifests clustered by partition, as Java's ``RewriteManifests``.

Why: planning prunes whole manifests by the partition ranges the manifest list records for
each of them (the metadata-indexing post: "the manifest list [...] keeps a summary of the
partition values in each manifest, so that scan planning can skip manifests"). A table
built by many appends of late-arriving data has manifests whose ranges overlap, so a point
query must open most of them. Rewriting sorts every live entry by its partition tuple and
cuts the sorted run into consecutive manifests, each covering a narrow range.

The rules, Java 1.10's (``RewriteManifestsSparkAction`` and ``BaseRewriteManifests``):

* only the current snapshot's manifests of one partition spec are rewritten (default: the
  table's current spec), data and delete manifests separately ("A manifest may store
  either data files or delete files, but not both");
* the number of new manifests is the rewritten manifests' total length divided by
  ``commit.manifest.target-size-bytes`` (8 MiB), rounded up; a content with a single
  manifest that would be rewritten into one is left alone;
* entries keep everything: "If the entry status is 0 (existing) or 2 (deleted), the entry
  must include both sequence numbers explicitly", and they become EXISTING with the
  snapshot id that added them. DELETED entries are dropped (they are not live);
* v3 row lineage: "The inherited value of ``first_row_id`` must be written into data file
  metadata when creating existing and deleted entries", so every row keeps its
  ``_row_id``. The new manifests have no ``first_row_id`` in the manifest list, which
  assigns them one from ``next-row-id`` as Java's ``ManifestListWriter`` does (the ids are
  unused: their entries carry their own);
* the commit is a ``replace`` snapshot whose summary has ``manifests-created``,
  ``manifests-kept``, ``manifests-replaced`` and ``entries-processed`` and the parent's
  totals (``entries-processed`` is ``0``, as Spark's procedure writes it: its action
  rewrites the entries and commits finished manifests, so the commit processed none). It
  checks that the new manifests hold exactly as many live files as the replaced ones
  (Java's ``validateFilesCounts``). On a retry after a concurrent commit the same new
  manifests are listed again together with the manifests the other commit left, after
  checking every replaced manifest is still in the current snapshot (Java's
  ``validateDeletedManifests``): otherwise the rewrite gives up.

Nothing is deleted: the replaced manifests stay referenced by the older snapshots, and go
when those snapshots are expired.
"""

from __future__ import annotations

import dataclasses
import math
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from iceduck.catalog.base import Catalog, LoadedTable
from iceduck.errors import NotFoundError, ValidationError
from iceduck.formats.manifest_list import assign_first_row_ids, write_manifest_list
from iceduck.formats.manifests import ManifestMeta
from iceduck.io import fileio
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import EntryStatus, ManifestContent, ManifestEntry, ManifestFile
from iceduck.spec.properties import (
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    int_property,
    metadata_location,
)
from iceduck.spec.snapshot import MAIN_BRANCH, Operation, Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.values import sort_key
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.manifest_merge import MergeContext, write_entries_manifest
from iceduck.txn.manifest_ops import FileWriter
from iceduck.txn.snapshot import branch_ref, new_snapshot_id
from iceduck.txn.summary import snapshot_summary
from iceduck.version import __version__


@dataclass(frozen=True)
class ManifestRewrite:
    """The manifests one rewrite replaced and the ones it added (empty: nothing to do)."""

    replaced: tuple[ManifestFile, ...]
    added: tuple[ManifestFile, ...]
    #: live entries moved into the new manifests
    entries: int


NOTHING = ManifestRewrite((), (), 0)


def _live_files(m: ManifestFile) -> int:
    return (m.added_files_count or 0) + (m.existing_files_count or 0)


def target_count(manifests: Sequence[ManifestFile], target_size_bytes: int) -> int:
    """How many manifests ``manifests`` become: their total length over the target size,
    rounded up (Java's ``targetNumManifests``), at least one."""
    total = sum(m.manifest_length for m in manifests)
    return max(1, math.ceil(total / max(1, target_size_bytes)))


def clustered(entries: Sequence[ManifestEntry], meta: ManifestMeta, count: int) -> list[list[ManifestEntry]]:
    """``entries`` sorted by partition tuple (nulls first, Iceberg's order of each
    partition type) and cut into ``count`` consecutive runs of nearly equal size."""
    ordered = sorted(entries, key=lambda e: sort_key(meta.partition_type, e.data_file.partition))
    count = max(1, min(count, len(ordered)))
    size = math.ceil(len(ordered) / count) if ordered else 0
    return [ordered[i : i + size] for i in range(0, len(ordered), size)] if size else []


def _existing(e: ManifestEntry) -> ManifestEntry:
    """A live entry as it is listed again: EXISTING, its snapshot id, sequence numbers and
    row id explicit (the cache has applied inheritance)."""
    return dataclasses.replace(e, status=EntryStatus.EXISTING)


def rewrite_manifests(
    metadata: TableMetadata,
    head: Snapshot,
    cache: ManifestCache,
    spec_id: int,
    ctx: MergeContext,
) -> ManifestRewrite:
    """Write the clustered manifests of ``head``'s manifests of ``spec_id`` (module
    docstring); nothing is committed here."""
    specs = metadata.specs_by_id()
    target = int_property(metadata.properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT)
    manifests = cache.snapshot_manifests(head, metadata.format_version)
    replaced: list[ManifestFile] = []
    added: list[ManifestFile] = []
    entries = 0
    for content in (ManifestContent.DATA, ManifestContent.DELETES):
        matching = [m for m in manifests if m.content is content and m.partition_spec_id == spec_id]
        count = target_count(matching, target)
        if not matching or (count == 1 and len(matching) == 1):
            continue
        parsed = cache.parsed_manifests(matching, specs)
        live = [_existing(e) for p in parsed for e in p.live]
        metas = [p.meta for p in parsed]
        for run in clustered(live, metas[0], count):
            added.append(write_entries_manifest(run, matching[0], metas, ctx))
        replaced.extend(matching)
        entries += len(live)
    if sum(_live_files(m) for m in added) != sum(_live_files(m) for m in replaced):
        raise ValidationError(
            "rewrite_manifests: the new manifests do not hold as many live files as the replaced ones"
        )
    return ManifestRewrite(tuple(replaced), tuple(added), entries)


def _replace_snapshot(
    base: TableMetadata, rewrite: ManifestRewrite, snapshot_id: int, list_path: str, cache: ManifestCache
) -> tuple[TableMetadata, bytes]:
    """The metadata with the ``replace`` snapshot listing ``rewrite.added`` and ``base``'s
    other manifests, and the bytes of its manifest list (to be written at ``list_path``)."""
    head = base.current_snapshot()
    if head is None:
        raise ValidationError("rewrite_manifests: the table has no current snapshot any more")
    current = cache.snapshot_manifests(head, base.format_version)
    replaced = {m.manifest_path for m in rewrite.replaced}
    missing = sorted(replaced - {m.manifest_path for m in current})
    if missing:
        raise ValidationError(
            f"rewrite_manifests: manifest {missing[0]} is no longer in the current snapshot "
            f"{head.snapshot_id} (a concurrent commit replaced it)"
        )
    kept = [m for m in current if m.manifest_path not in replaced]
    rows = [*rewrite.added, *kept]
    fv = base.format_version
    sequence_number = base.last_sequence_number + 1 if fv >= 2 else 0
    first_row_id = added_rows = None
    if fv >= 3:
        first_row_id = base.next_row_id or 0
        rows, next_row_id = assign_first_row_ids(rows, first_row_id)
        added_rows = next_row_id - first_row_id
    manifest_list = write_manifest_list(
        rows, fv, snapshot_id, head.snapshot_id, sequence_number, first_row_id
    )
    extra = {
        "manifests-created": str(len(rewrite.added)),
        "manifests-kept": str(len(kept)),
        "manifests-replaced": str(len(rewrite.replaced)),
        # Java's action moves the entries itself and hands finished manifests to the
        # commit, whose counter of entries it processed stays 0: Spark writes "0"
        "entries-processed": "0",
    }
    summary = snapshot_summary(Operation.REPLACE.value, (), (), head.summary, extra, __version__)
    snapshot = Snapshot(
        snapshot_id=snapshot_id,
        timestamp_ms=int(time.time() * 1000),
        summary=summary,
        parent_snapshot_id=head.snapshot_id,
        sequence_number=sequence_number,
        manifest_list=list_path,
        schema_id=base.current_schema_id,
        first_row_id=first_row_id,
        added_rows=added_rows,
    )
    builder = MetadataBuilder(base)
    builder.add_snapshot(snapshot)
    builder.set_ref(MAIN_BRANCH, branch_ref(base, MAIN_BRANCH, snapshot_id))
    return builder.build(now_ms=snapshot.timestamp_ms), manifest_list


def commit_manifest_rewrite(
    catalog: Catalog, table: LoadedTable, cache: ManifestCache, spec_id: int | None
) -> ManifestRewrite:
    """Rewrite the current snapshot's manifests of ``spec_id`` (default: the current spec)
    and commit them as a ``replace`` snapshot of ``main``; what was replaced and added
    (:data:`NOTHING` when the table is empty or already one manifest per content).

    The new manifests are written once; each commit attempt writes its own manifest list
    (``snap-<id>-<attempt>-<uuid>.avro``) and lists the manifests again, so the commit loop
    keeps them when an attempt lands and deletes them when none does."""
    metadata = table.metadata
    specs = metadata.specs_by_id()
    spec_id = metadata.default_spec_id if spec_id is None else spec_id
    if spec_id not in specs:
        raise NotFoundError(f"table {table.identifier} has no partition spec with id {spec_id}")
    head = metadata.current_snapshot()
    if head is None:
        return NOTHING
    snapshot_id = new_snapshot_id(metadata)
    writer = FileWriter(metadata_location(metadata.properties, metadata.location), str(uuid.uuid4()))
    ctx = MergeContext(cache, specs, metadata.schema(), metadata.format_version, snapshot_id, writer)
    try:
        rewrite = rewrite_manifests(metadata, head, cache, spec_id, ctx)
    except BaseException:
        writer.delete_written()
        raise
    if not rewrite.replaced:
        return NOTHING
    manifests = list(writer.written)
    attempts = 0

    def attempt(base: LoadedTable) -> PendingCommit:
        nonlocal attempts
        attempts += 1
        list_path = writer.manifest_list_path(snapshot_id, attempts)
        new_metadata, manifest_list = _replace_snapshot(base.metadata, rewrite, snapshot_id, list_path, cache)
        fileio.write_new(list_path, manifest_list)
        return PendingCommit(new_metadata, [*manifests, list_path])

    commit(catalog, table.identifier, attempt, base=table, cleanup_on_failure=manifests)
    return rewrite

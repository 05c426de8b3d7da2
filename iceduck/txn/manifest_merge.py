"""Merging small manifests on commit, as Iceberg Java 1.10's ``ManifestMergeManager`` does.

Without merging, a table written by many small commits gains one manifest per commit and
scan planning opens every one of them. Spark's SQL writes go through Java's
``MergingSnapshotProducer`` (``MergeAppend`` for INSERT, ``BaseOverwriteFiles``,
``BaseReplacePartitions``, ``BaseRowDelta``, ``BaseRewriteFiles``, ``StreamingDelete``: every
producer but ``FastAppend``), which merges the manifest list of each commit. iceduck does the
same for every snapshot it produces, so a table keeps the manifest layout Spark would give
it and the two engines can take turns writing without one of them piling up manifests.

The rules, Java's (table properties from :mod:`iceduck.spec.properties`):

* ``commit.manifest-merge.enabled`` (default true) off: the manifests are left as they are.
* Data and delete manifests are merged separately, and within each "per partition spec":
  "A manifest stores files for a single partition spec". The groups come out in descending
  spec id order (Java groups into a reverse-ordered ``TreeMap``), each group in its order.
* A group is bin-packed by manifest length to ``commit.manifest.target-size-bytes``
  (default 8 MiB) with Java's ``ListPacker(target, lookback=1, largestBinFirst=false)
  .packEnd``: packing runs from the oldest manifest backwards so that the one bin left
  under-filled is the newest, which the next commit tops up. With a look-back of 1 the
  manifests keep their order.
* A bin of one manifest is kept. A bin holding the *first* manifest (the commit's new
  manifest, or the first manifest of the list when the commit adds none) is merged only
  when it has at least ``commit.manifest.min-count-to-merge`` (default 100) manifests, "so
  that large manifests don't prevent merging older groups"; every other bin of two or more
  manifests is merged. Java compares the bin's size, not the group's, and so do we.
* A merged manifest holds the entries of its bin in order: files ADDED by this snapshot stay
  ADDED, files DELETED by this snapshot stay DELETED, DELETED entries of older snapshots are
  dropped ("suppress deletes from previous snapshots"), and every other live entry becomes
  EXISTING keeping its snapshot id and sequence numbers ("If the entry status is 0
  (existing) or 2 (deleted), the entry must include both sequence numbers explicitly").
* Row lineage (v3): "The inherited value of ``first_row_id`` must be written into data file
  metadata when creating existing and deleted entries". EXISTING entries keep the row ids
  they had, including those of manifests this commit rewrote and has not committed yet.
  Java 1.10 cleared those (its reader nulls ``first_row_id`` of any manifest without one,
  giving the rows new ids); Iceberg fixed that after 1.10 (apache/iceberg#16263) and iceduck
  follows the fix, because the spec requires row ids to survive a rewrite. ADDED entries
  have no ``first_row_id`` and inherit one from the merged manifest's, which the manifest
  list assigns from ``added_rows_count + existing_rows_count`` as Java's does.
* The merged manifest is written with the table's spec and current schema (Java's
  ``newManifestWriter(spec(specId))``), unless a source column of the spec is gone from the
  schema: then, as for rewritten manifests, the stored layout of a manifest in the bin is
  reused, since a partition tuple's type cannot be derived from a missing column.

Iceberg 1.10 does not write ``manifests-created``/``manifests-kept``/``manifests-replaced``
/``entries-processed`` into append, overwrite or row-delta summaries (only
``RewriteManifests`` does; the merge counters arrived after 1.10), so merging does not
change the snapshot summary.

The manifests this commit wrote and then merged away are deleted right away: nothing
refers to them (Java deletes them after the commit, in ``cleanUncommitted``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from iceduck.formats.manifest_writer import write_manifest_raw
from iceduck.formats.manifests import ManifestMeta, read_manifest
from iceduck.formats.schema_json import partition_fields_to_json, schema_to_json
from iceduck.io import fileio
from iceduck.scan.manifest_cache import ManifestCache
from iceduck.spec.manifest import EntryStatus, ManifestEntry, ManifestFile
from iceduck.spec.partition import PartitionSpec
from iceduck.spec.properties import (
    MANIFEST_MERGE_ENABLED,
    MANIFEST_MERGE_ENABLED_DEFAULT,
    MANIFEST_MIN_MERGE_COUNT,
    MANIFEST_MIN_MERGE_COUNT_DEFAULT,
    MANIFEST_TARGET_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
    bool_property,
    int_property,
)
from iceduck.spec.schema import Schema
from iceduck.spec.types import StructType, UnknownType
from iceduck.txn.manifest_ops import FileWriter

T = TypeVar("T")


@dataclass(frozen=True)
class MergeSettings:
    """The three table properties that steer merging, with Java's defaults."""

    enabled: bool = MANIFEST_MERGE_ENABLED_DEFAULT
    min_count_to_merge: int = MANIFEST_MIN_MERGE_COUNT_DEFAULT
    target_size_bytes: int = MANIFEST_TARGET_SIZE_BYTES_DEFAULT

    @classmethod
    def of(cls, properties: Mapping[str, str]) -> MergeSettings:
        """Read from table properties (Java reads them once per snapshot producer)."""
        return cls(
            enabled=bool_property(properties, MANIFEST_MERGE_ENABLED, MANIFEST_MERGE_ENABLED_DEFAULT),
            min_count_to_merge=int_property(
                properties, MANIFEST_MIN_MERGE_COUNT, MANIFEST_MIN_MERGE_COUNT_DEFAULT
            ),
            target_size_bytes=int_property(
                properties, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT
            ),
        )


# -- planning (pure) -------------------------------------------------------------------------


def pack_end(items: Sequence[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """Java's ``ListPacker(target, lookback=1, largestBinFirst=false).packEnd``.

    Packs from the last item backwards, one open bin at a time: an item joins the open bin
    while the bin's weight stays within ``target``, otherwise the bin is closed and the item
    starts a new one (an item heavier than ``target`` gets a bin of its own). The bins and
    their items are returned in the original order, so the under-filled bin is the first.
    """
    bins: list[list[T]] = []
    current: list[T] = []
    current_weight = 0
    for item in reversed(items):
        w = weight(item)
        if current and current_weight + w <= target:
            current.append(item)
            current_weight += w
            continue
        if current:
            bins.append(current)
        current, current_weight = [item], w
    if current:
        bins.append(current)
    return [list(reversed(b)) for b in reversed(bins)]


def plan_merge(manifests: Sequence[ManifestFile], settings: MergeSettings) -> list[tuple[ManifestFile, ...]]:
    """The output manifests of ``manifests`` (all data or all delete manifests), in order:
    a tuple of one is kept as it is, a longer tuple is merged into one manifest (rules:
    module docstring)."""
    if not settings.enabled or not manifests:
        return [(m,) for m in manifests]
    first = manifests[0]
    groups: dict[int, list[ManifestFile]] = {}
    for m in manifests:
        groups.setdefault(m.partition_spec_id, []).append(m)
    out: list[tuple[ManifestFile, ...]] = []
    for spec_id in sorted(groups, reverse=True):
        for bin_ in pack_end(groups[spec_id], lambda m: m.manifest_length, settings.target_size_bytes):
            has_first = any(m is first for m in bin_)
            if len(bin_) == 1 or (has_first and len(bin_) < settings.min_count_to_merge):
                out.extend((m,) for m in bin_)
            else:
                out.append(tuple(bin_))
    return out


def merged_entries(entries: Iterable[ManifestEntry], snapshot_id: int) -> list[ManifestEntry]:
    """The entries of a merged manifest from the entries of its bin (read with inherited
    values applied, so EXISTING entries get explicit sequence numbers and row ids)."""
    out = []
    for e in entries:
        if e.status is EntryStatus.DELETED:
            if e.snapshot_id == snapshot_id:
                out.append(e)  # deleted by this commit: the deletion must stay recorded
        elif e.status is EntryStatus.ADDED and e.snapshot_id == snapshot_id:
            # Java's ``add(entry)``: keeps an assigned data sequence number, the file
            # sequence number is the commit's
            out.append(dataclasses.replace(e, file_sequence_number=None))
        else:
            out.append(dataclasses.replace(e, status=EntryStatus.EXISTING))
    return out


# -- writing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergeContext:
    """What merging needs from the snapshot producer."""

    cache: ManifestCache
    specs: dict[int, PartitionSpec]
    schema: Schema
    format_version: int
    snapshot_id: int
    writer: FileWriter


def merge_manifests(
    manifests: Sequence[ManifestFile], settings: MergeSettings, ctx: MergeContext
) -> list[ManifestFile]:
    """``manifests`` with their bins merged (:func:`plan_merge`); merged manifests are
    written through ``ctx.writer``, and manifests this commit wrote that were merged away
    are deleted again."""
    out: list[ManifestFile] = []
    for bin_ in plan_merge(manifests, settings):
        if len(bin_) == 1:
            out.append(bin_[0])
            continue
        out.append(_write_merged(bin_, ctx))
        for m in bin_:
            if m.manifest_path in ctx.writer.written:
                ctx.writer.discard(m.manifest_path)
    return out


def _read(m: ManifestFile, ctx: MergeContext) -> tuple[ManifestMeta, Sequence[ManifestEntry]]:
    """A bin member's entries with inherited values applied. Committed manifests come from
    the cache; one written by this commit is read directly: its ADDED entries have no
    sequence number yet, which the cache's planning rows cannot hold."""
    if m.manifest_path in ctx.writer.written:
        meta, entries = read_manifest(fileio.read_bytes(m.manifest_path), m.manifest_path, m, ctx.specs)
        return meta, entries
    cm = ctx.cache.parsed_manifest(m, ctx.specs)
    return cm.meta, cm.entries


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _layout(spec_id: int, metas: Sequence[ManifestMeta], ctx: MergeContext) -> tuple[StructType, str, str]:
    """(partition type, schema JSON, spec JSON) of the merged manifest (module docstring)."""
    spec = ctx.specs.get(spec_id)
    if spec is not None:
        ptype = spec.partition_type(ctx.schema)
        if not any(isinstance(f.field_type, UnknownType) for f in ptype.fields):
            return ptype, _compact(schema_to_json(ctx.schema)), _compact(partition_fields_to_json(spec))
    meta = metas[0]
    return meta.partition_type, meta.schema_json, meta.partition_spec_json


def _write_merged(bin_: Sequence[ManifestFile], ctx: MergeContext) -> ManifestFile:
    metas = []
    entries: list[ManifestEntry] = []
    for m in bin_:
        meta, read = _read(m, ctx)
        metas.append(meta)
        entries.extend(merged_entries(read, ctx.snapshot_id))
    return write_entries_manifest(entries, bin_[0], metas, ctx)


def write_entries_manifest(
    entries: Sequence[ManifestEntry], like: ManifestFile, metas: Sequence[ManifestMeta], ctx: MergeContext
) -> ManifestFile:
    """Write ``entries`` as one new manifest of ``like``'s spec and content, in the layout
    of :func:`_layout` (``metas``: the stored layouts of the manifests they came from); its
    manifest-list row. Shared with the manifest rewrite (:mod:`iceduck.txn.manifest_rewrite`)."""
    spec_id = like.partition_spec_id
    partition_type, schema_json, spec_json = _layout(spec_id, metas, ctx)
    path = ctx.writer.next_manifest_path()
    data, row = write_manifest_raw(
        entries,
        partition_type=partition_type,
        spec_id=spec_id,
        schema_json=schema_json,
        partition_spec_json=spec_json,
        format_version=ctx.format_version,
        content=like.content,
        snapshot_id=ctx.snapshot_id,
        path=path,
    )
    ctx.writer.write(path, data)
    return row

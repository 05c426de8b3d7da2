"""``CALL system.rewrite_position_delete_files(table, options, where)``: compact a v2
table's position delete files per partition and drop deletes of removed data files.

Spark's result: one row, ``rewritten_delete_files_count``, ``added_delete_files_count``
(ints), ``rewritten_bytes_count``, ``added_bytes_count`` (longs). Which files are
rewritten and the options are :mod:`iceduck.txn.position_delete_rewrite`'s. The deletes
of each group are read, those whose data file is no longer live in the current snapshot
(dangling) are dropped, and the rest is written sorted by file and position into as many
files as the group's size over the target size (at least one, none when every delete was
dangling), in the group's partition. The commit is a ``replace`` snapshot removing the
rewritten files and adding the new ones; on a retry after a concurrent commit, a
rewritten file that is no longer live ends the rewrite (a concurrent rewrite won).
Nothing is deleted from disk: older snapshots still read the old files.

v3 tables: deletion vectors are never rewritten, and "Position delete files must not be
added to v3 tables" (spec): the legacy position delete files of a table upgraded from v2
that the planner picks become deletion vectors instead
(:mod:`iceduck.ops.procedures.position_deletes_v3`; ``added_bytes_count`` counts the DV
blobs' bytes, a Puffin file being shared by the DVs it holds); one without returns zeros.

``where`` (Spark SQL on the table's columns) keeps only the delete files of the
partitions that may hold matching rows (see :mod:`iceduck.txn.position_delete_rewrite`);
the size rules then apply to those.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from iceduck.engine.delete_write import write_position_deletes
from iceduck.engine.deletes import positions_by_delete_file
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.position_deletes_v3 import convert_to_deletion_vectors
from iceduck.ops.procedures.where import where_filter
from iceduck.ops.rows import plan_target
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, data_location
from iceduck.scan.tasks import DeleteFile
from iceduck.spec.expressions.predicates import AlwaysFalse
from iceduck.spec.manifest import DataFile, ManifestContent
from iceduck.spec.snapshot import Operation
from iceduck.txn.manifest_ops import live_data_files
from iceduck.txn.position_delete_rewrite import (
    RewriteOptions,
    in_matching_partitions,
    plan_groups,
    why_no_groups,
)
from iceduck.txn.snapshot import SnapshotChanges

_WHO = "rewrite_position_delete_files"


def _group_deletes(ctx: OpContext, group: list[DeleteFile], live: set[str]) -> dict[str, np.ndarray]:
    """The group's deletes by live data file, sorted, unique, dangling ones dropped."""
    by_file = positions_by_delete_file(ctx.duck, group, ctx.positions)
    merged: dict[str, list[np.ndarray]] = {}
    for deletes in by_file.values():
        for data_file, positions in deletes.items():
            if data_file in live:
                merged.setdefault(data_file, []).append(positions)
    return {path: np.unique(np.concatenate(parts)) for path, parts in sorted(merged.items())}


def _chunks(paths: list[str], count: int) -> list[list[str]]:
    size = math.ceil(len(paths) / count)
    return [paths[i : i + size] for i in range(0, len(paths), size)]


def rewrite_position_delete_files(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    metadata = table.metadata
    options = RewriteOptions.of(args.get("options", {}), metadata.properties)
    implied = None
    if "where" in args:  # checked even when there is nothing to rewrite
        target = WriteTarget(table)
        implied = where_filter(ctx, target, plan_target(ctx, target, AlwaysFalse()), args["where"], _WHO)
    head = metadata.current_snapshot()
    if head is None:
        ctx.notices.append("nothing rewritten: the table has no snapshot")
        return [(0, 0, 0, 0)]
    specs = metadata.specs_by_id()
    manifests = ctx.manifests.snapshot_manifests(head, metadata.format_version)
    files: dict[str, DeleteFile] = {}
    for m in manifests:
        if m.content is ManifestContent.DELETES:
            for d in ctx.manifests.parsed_manifest(m, specs).deletes:
                files.setdefault(d.path, d)
    candidates = list(files.values())
    if implied is not None:
        candidates = in_matching_partitions(candidates, specs, metadata.schema(), implied)
    groups = plan_groups(candidates, options)
    if not groups:
        ctx.notices.append(why_no_groups(candidates, options))
        return [(0, 0, 0, 0)]
    if metadata.format_version >= 3:
        rewritten_v3, added_dvs = convert_to_deletion_vectors(ctx, WriteTarget(table), groups)
        return [
            (
                len(rewritten_v3),
                len(added_dvs),
                sum(f.file_size_in_bytes for f in rewritten_v3),
                sum(f.content_size_in_bytes or 0 for f in added_dvs),
            )
        ]
    live = set(live_data_files(manifests, ctx.manifests, specs))
    location = data_location(metadata)
    added: list[DataFile] = []
    with WrittenFiles() as written:
        for group in groups:
            deletes = _group_deletes(ctx, group, live)
            if not deletes:
                continue
            size = sum(f.file_size_in_bytes for f in group)
            count = max(1, math.ceil(size / options.target_file_size))
            for chunk in _chunks(list(deletes), count):
                written_file = write_position_deletes(
                    ctx.duck,
                    {path: deletes[path] for path in chunk},
                    location=location,
                    spec_id=group[0].spec_id,
                    partition=group[0].partition,
                    properties=metadata.properties,
                )
                added.extend(written.add([written_file]))
        rewritten = [f for g in groups for f in g]
        changes = SnapshotChanges(
            Operation.REPLACE,
            added_delete_files=tuple(added),
            removed_delete_files=tuple(f.path for f in rewritten),
            validate_from_snapshot_id=head.snapshot_id,
        )
        commit_changes(ctx, WriteTarget(table), changes, written)
    return [
        (
            len(rewritten),
            len(added),
            sum(f.file_size_in_bytes for f in rewritten),
            sum(f.file_size_in_bytes for f in added),
        )
    ]


PROCEDURE = Procedure(
    name="rewrite_position_delete_files",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("options", Kind.STRING_MAP),
        Parameter("where", Kind.STRING),
    ),
    output=pa.schema(
        [
            pa.field("rewritten_delete_files_count", pa.int32()),
            pa.field("added_delete_files_count", pa.int32()),
            pa.field("rewritten_bytes_count", pa.int64()),
            pa.field("added_bytes_count", pa.int64()),
        ]
    ),
    run=rewrite_position_delete_files,
    summary="compact position delete files and drop dangling deletes",
)

"""Applying row-level changes: copy-on-write rewrites or merge-on-read deletes.

DELETE, UPDATE and MERGE all reduce to the same change:

* ``whole``: data files every live row of which goes away (removed from metadata only);
* ``addresses``: a DuckDB relation of ``_file``, ``_pos`` -- the rows removed or replaced
  inside the other files;
* ``new_rows``: SQL yielding the rows to add (updated and inserted rows), the table's
  columns in order, then in v3 ``_row_id`` and ``_last_updated_sequence_number``.

*Copy-on-write* ("copy-on-write rewrites affected files") writes the surviving rows of
every file holding an address together with the new rows, and removes those files with
their deletion vectors. Surviving rows keep ``_row_id`` and
``_last_updated_sequence_number`` -- spec, "Row Lineage": "The row's existing non-null
``_row_id`` must be copied into the new data file" and "If the write has not modified the
row, the existing non-null ``_last_updated_sequence_number`` value must be copied".

*Merge-on-read* writes the addresses as deletes: in v3 one deletion vector per data file,
merged with the file's existing DV or position deletes ("Writers must ensure that there
is at most one deletion vector per data file and must merge new deletes with existing
vectors or position delete files"; the old DV entry is removed); in v2 Parquet position
delete files, one per partition. v1 has no row-level deletes ("Row-level deletes are
added by v2"): merge-on-read is refused there, as Iceberg Java refuses delete files in a
v1 table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iceduck.engine.deletes import deleted_positions, positions_by_delete_file
from iceduck.engine.write import write_data_files
from iceduck.errors import ValidationError
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.rows import (
    FILE,
    LAST_UPDATED,
    POS,
    ROW_ID,
    column_list,
    has_lineage,
    params_for,
    register_target,
    restricted,
    run_sql,
)
from iceduck.ops.snapshot_commit import (
    WrittenFiles,
    commit_changes,
    data_location,
    file_target,
)
from iceduck.scan.tasks import FileScanTask, ScanPlan
from iceduck.spec import properties as props
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import DataFile, ManifestContent
from iceduck.spec.snapshot import Operation
from iceduck.txn.dv_merge import replaced_position_delete_files
from iceduck.txn.manifest_ops import DeleteKey, live_data_files
from iceduck.txn.snapshot import SnapshotChanges
from iceduck.txn.validation import ConflictDetection, IsolationLevel


@dataclass(frozen=True)
class RowChanges:
    """What a row-level statement changes (see the module docstring)."""

    plan: ScanPlan
    whole: tuple[FileScanTask, ...] = ()
    #: DuckDB relation (SQL text: a name or ``(SELECT ...)``) of ``_file``, ``_pos``
    addresses: str | None = None
    #: SQL of the rows to add; it may hold the statement's ``$n`` parameters
    new_rows: str | None = None


def removed_delete_keys(tasks: Sequence[FileScanTask]) -> list[DeleteKey]:
    """Delete files that die with (or are replaced for) ``tasks``' data files: their
    deletion vectors ("When removing a data file, writers must also remove any deletion
    vector that applies to that data file"), keyed by (Puffin path, data file) since one
    Puffin file holds the DVs of many data files, and position delete files scoped to that
    one file."""
    keys: list[DeleteKey] = []
    for t in tasks:
        dv = t.deletion_vector
        if dv is not None:
            keys.append((dv.path, t.path))
        keys.extend(d.path for d in t.position_deletes if d.referenced_data_file == t.path)
    return list(dict.fromkeys(keys))


def _affected(ctx: OpContext, changes: RowChanges) -> dict[str, np.ndarray]:
    """Positions per data file of the addresses (sorted, unique)."""
    if changes.addresses is None:
        return {}
    table = run_sql(
        ctx,
        f"SELECT {FILE} AS f, list(DISTINCT {POS} ORDER BY {POS}) AS p FROM {changes.addresses} "
        f"GROUP BY {FILE}",
    )
    return {f: np.asarray(p, dtype=np.int64) for f, p in table}


def _operation(added_data: bool, removed: bool) -> Operation:
    """Java: a commit adding data and removing/deleting rows is an overwrite; only removing
    rows is a delete; only adding is an append."""
    if added_data and removed:
        return Operation.OVERWRITE
    return Operation.APPEND if added_data else Operation.DELETE


def conflict_detection(
    operation: str, plan: ScanPlan, isolation: IsolationLevel, level_property: str | None = None
) -> ConflictDetection:
    """What a concurrent append must not touch for the statement to commit: rows matching
    the filter the statement's scan was planned with (bound to the schema it read), as
    Spark passes the scan's pushed-down filters as the ``conflictDetectionFilter``."""
    return ConflictDetection(operation, isolation, plan.row_filter, level_property=level_property)


def apply_row_changes(
    ctx: OpContext,
    target: WriteTarget,
    changes: RowChanges,
    mode: str,
    conflicts: ConflictDetection | None = None,
) -> None:
    """Write and commit ``changes`` in ``mode``; nothing is committed when nothing changes.

    ``conflicts`` says which concurrently added data files fail the commit (serializable
    isolation); None checks only the files the statement removes or deletes from."""
    metadata = target.table.metadata
    positions = _affected(ctx, changes)
    if not changes.whole and not positions and changes.new_rows is None:
        return
    tasks = {t.path: t for t in changes.plan.tasks}
    affected = [tasks[p] for p in positions]
    lineage = has_lineage(metadata)
    with WrittenFiles() as written:
        if mode == props.COPY_ON_WRITE:
            added = _copy_on_write(ctx, target, changes, affected, lineage, written)
            delete_files: list[DataFile] = []
            removed_data = [t.path for t in (*changes.whole, *affected)]
            removed_deletes = removed_delete_keys([*changes.whole, *affected])
        else:
            if metadata.format_version < 2 and positions:
                raise ValidationError(
                    f"table {target.identifier} is format-version 1, which has no row-level deletes: "
                    "merge-on-read needs format-version 2 (use copy-on-write or upgrade the table)"
                )
            added = _new_rows(ctx, target, changes, lineage, written)
            delete_files, replaced = _merge_on_read(ctx, target, changes, affected, positions, written)
            removed_data = [t.path for t in changes.whole]
            removed_deletes = removed_delete_keys(changes.whole) + replaced
        if not added and not delete_files and not removed_data:
            return
        touched = [t.path for t in affected]
        snapshot_changes = SnapshotChanges(
            operation=_operation(bool(added), bool(removed_data or delete_files)),
            added_data_files=tuple(added),
            added_delete_files=tuple(delete_files),
            removed_data_files=tuple(removed_data),
            removed_delete_files=tuple(dict.fromkeys(removed_deletes)),
            validate_from_snapshot_id=changes.plan.snapshot_id,
            validate_data_files_live=tuple(touched),
            validate_no_new_deletes_for=tuple(dict.fromkeys([*touched, *removed_data])),
            conflict_detection=conflicts,
        )
        commit_changes(ctx, target, snapshot_changes, written)


def _new_rows(
    ctx: OpContext, target: WriteTarget, changes: RowChanges, lineage: bool, written: WrittenFiles
) -> list[DataFile]:
    if changes.new_rows is None:
        return []
    return written.add(
        write_data_files(
            ctx.duck,
            changes.new_rows,
            file_target(target.table.metadata),
            params=params_for(changes.new_rows, ctx.params),
            row_lineage=lineage,
        )
    )


def _copy_on_write(
    ctx: OpContext,
    target: WriteTarget,
    changes: RowChanges,
    affected: list[FileScanTask],
    lineage: bool,
    written: WrittenFiles,
) -> list[DataFile]:
    """Surviving rows of the affected files plus the new rows, written together."""
    parts = []
    if affected:
        scan = register_target(ctx, restricted(changes.plan, affected), lineage, kind="rewrite")
        columns = column_list(scan.schema, "__r.")
        if lineage:
            columns += f", __r.{ROW_ID}, __r.{LAST_UPDATED}"
        parts.append(
            f"SELECT {columns} FROM {scan.relation} AS __r ANTI JOIN {changes.addresses} AS __a "
            f"ON __r.{FILE} = __a.{FILE} AND __r.{POS} = __a.{POS}"
        )
    if changes.new_rows is not None:
        parts.append(f"SELECT * FROM ({changes.new_rows})")
    if not parts:
        return []
    query = " UNION ALL ".join(parts)
    return written.add(
        write_data_files(
            ctx.duck,
            query,
            file_target(target.table.metadata),
            params=params_for(query, ctx.params),
            row_lineage=lineage,
        )
    )


def _dv_and_live_files(
    ctx: OpContext, target: WriteTarget, snapshot_id: int | None
) -> tuple[set[str], set[str]]:
    """The data files that have a deletion vector in the snapshot the statement read, and
    its live data files (all of them, not only those the statement's filter kept: metadata
    only, from cached manifests)."""
    metadata = target.table.metadata
    if snapshot_id is None:
        return set(), set()
    snapshot = metadata.snapshot_by_id(snapshot_id)
    manifests = ctx.manifests.snapshot_manifests(snapshot, metadata.format_version)
    specs = metadata.specs_by_id()
    with_dv = set()
    for m in manifests:
        if m.content is ManifestContent.DELETES:
            for d in ctx.manifests.parsed_manifest(m, specs).deletes:
                if d.is_deletion_vector and d.referenced_data_file is not None:
                    with_dv.add(d.referenced_data_file)
    return with_dv, set(live_data_files(manifests, ctx.manifests, specs))


def _replaced_legacy_deletes(
    ctx: OpContext, target: WriteTarget, changes: RowChanges, affected: list[FileScanTask]
) -> list[DeleteKey]:
    """Position delete files of a table upgraded from v2 that the new DVs make redundant
    (:mod:`iceduck.txn.dv_merge`): all their deletes are for data files that have a DV once
    this commit lands (written now, or already there), that this commit removes, or that
    are no longer live."""
    candidates = {d.path: d for t in affected if t.deletion_vector is None for d in t.position_deletes}
    if not candidates:
        return []
    contents = positions_by_delete_file(ctx.duck, list(candidates.values()), ctx.positions)
    covered = {t.path for t in affected}
    covered.update(t.path for t in changes.whole)
    with_dv, live = _dv_and_live_files(ctx, target, changes.plan.snapshot_id)
    covered.update(with_dv)
    found = {p: contents.get(p, {}) for p in candidates}
    return list(replaced_position_delete_files(found, covered, live))


def _merge_on_read(
    ctx: OpContext,
    target: WriteTarget,
    changes: RowChanges,
    affected: list[FileScanTask],
    positions: dict[str, np.ndarray],
    written: WrittenFiles,
) -> tuple[list[DataFile], list[DeleteKey]]:
    """Delete files for the addresses, and the delete files they replace."""
    from iceduck.engine.delete_write import write_deletion_vector_file, write_position_deletes

    if not affected:
        return [], []
    metadata = target.table.metadata
    location = data_location(metadata)
    if metadata.format_version >= 3:
        existing = deleted_positions(ctx.duck, [t for t in affected if t.has_deletes], ctx.positions)
        vectors = {}
        for t in affected:
            vector = DeletionVector(positions[t.path])
            old = existing.get(t.path)
            if old is not None and len(old):
                vector.update(old)
            vectors[t.path] = vector
        partitions = {t.path: (t.spec_id, t.partition) for t in affected}
        files = written.add(write_deletion_vector_file(vectors, location=location, partitions=partitions))
        return files, removed_delete_keys(affected) + _replaced_legacy_deletes(ctx, target, changes, affected)
    by_partition: dict[tuple[int, tuple], dict[str, np.ndarray]] = {}
    for t in affected:
        by_partition.setdefault((t.spec_id, t.partition), {})[t.path] = positions[t.path]
    files = []
    for (spec_id, partition), deletes in by_partition.items():
        written_file = write_position_deletes(
            ctx.duck,
            deletes,
            location=location,
            spec_id=spec_id,
            partition=partition,
            properties=metadata.properties,
        )
        files.extend(written.add([written_file]))
    return files, []

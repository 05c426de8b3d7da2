"""``rewrite_position_delete_files`` on a v3 table: legacy position delete files become
deletion vectors.

"Position delete files must not be added to v3 tables, but existing position delete
files are valid" (spec), so on a table upgraded from v2 the rewrite writes DVs, as Iceberg
Java 1.10's Spark rewrite does for format version 3. The rewritten group's files leave
the table; for every live data file they hold deletes for:

* a data file that already has a DV needs nothing: "If a DV is written for a data file,
  it must replace all previously written position delete files", so that DV already
  holds these deletes;
* any other gets a DV of *all* its deletes -- the planner's union of every position
  delete file that applies to it, not only the group's -- because once it has a DV,
  "readers can safely ignore matching position delete files": a DV of the group's
  deletes alone would resurrect the rows deleted by a legacy file outside the group.

Deletes of data files no longer live are dropped. The commit is a ``replace`` that
fails if a concurrent commit removed one of the data files given a DV or added deletes
for one (so a second DV for a data file is never written), or removed a rewritten file.
"""

from __future__ import annotations

from collections.abc import Sequence

from iceduck.engine.delete_write import write_deletion_vector_file
from iceduck.engine.deletes import deleted_positions, positions_by_delete_file
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.rows import plan_target
from iceduck.ops.snapshot_commit import WrittenFiles, commit_changes, data_location
from iceduck.scan.tasks import DeleteFile
from iceduck.spec.deletion_vector import DeletionVector
from iceduck.spec.manifest import DataFile
from iceduck.spec.snapshot import Operation
from iceduck.txn.snapshot import SnapshotChanges


def convert_to_deletion_vectors(
    ctx: OpContext, target: WriteTarget, groups: Sequence[Sequence[DeleteFile]]
) -> tuple[list[DeleteFile], list[DataFile]]:
    """Replace the groups' position delete files by DVs (module docstring) and commit;
    the rewritten files and the added DV entries."""
    rewritten = [f for g in groups for f in g]
    contents = positions_by_delete_file(ctx.duck, rewritten, ctx.positions)
    referenced = {data_file for deletes in contents.values() for data_file in deletes}
    plan = plan_target(ctx, target)
    # live data files the group's deletes are for; the plan resolved which deletes apply
    tasks = [t for t in plan.tasks if t.path in referenced]
    needing = [t for t in tasks if t.deletion_vector is None]
    existing = deleted_positions(ctx.duck, needing, ctx.positions)
    vectors = {t.path: DeletionVector(existing[t.path]) for t in needing if t.path in existing}
    partitions = {t.path: (t.spec_id, t.partition) for t in needing}
    metadata = target.table.metadata
    with WrittenFiles() as written:
        added: list[DataFile] = []
        if vectors:
            added = written.add(
                write_deletion_vector_file(vectors, location=data_location(metadata), partitions=partitions)
            )
        touched = tuple(vectors)
        changes = SnapshotChanges(
            Operation.REPLACE,
            added_delete_files=tuple(added),
            removed_delete_files=tuple(f.path for f in rewritten),
            validate_from_snapshot_id=plan.snapshot_id,
            validate_data_files_live=touched,
            validate_no_new_deletes_for=touched,
        )
        commit_changes(ctx, target, changes, written)
    return rewritten, added

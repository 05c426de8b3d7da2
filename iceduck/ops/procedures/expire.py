"""``CALL system.expire_snapshots(table, older_than, retain_last, max_concurrent_deletes,
stream_results, snapshot_ids, clean_expired_metadata)``: remove old snapshots, then the
files only they reached.

Spark's procedure (Iceberg 1.10): the arguments override the table's
``history.expire.*`` retention (the policy is :mod:`iceduck.txn.expire`); the result is
one row counting the deleted data files, position-delete files (deletion-vector Puffin
files included), equality-delete files, manifests, manifest lists and statistics files.
``max_concurrent_deletes`` must be positive (Spark's message) and, like
``stream_results``, changes nothing here: deletes run one after another.

Order matters for safety: the metadata change commits first (through the commit loop,
re-deciding on a refreshed table after a conflict); only then are files deleted, and
only files that the table as it was committed over reached and the table as it is now
(reloaded after the commit, so a concurrent writer's new snapshots count) no longer
reaches (:mod:`iceduck.txn.file_cleanup`; a file that retained manifests list only as
deleted is no longer reached, as in Java). A crash before the commit changes nothing; a
crash after it leaves a readable table and some unreferenced files.
"""

from __future__ import annotations

import pyarrow as pa

from iceduck.catalog.base import LoadedTable
from iceduck.errors import CorruptDataError, StorageError, UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.scan.reachable import reachable_files
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.expire import ExpireRequest, check_gc_enabled, expire_snapshots
from iceduck.txn.file_cleanup import DeletedCounts, delete_unreachable


def check_max_concurrent_deletes(args: Arguments) -> None:
    """Spark's check of ``max_concurrent_deletes`` (the value itself is not used)."""
    value = args.get("max_concurrent_deletes")
    if value is not None and value <= 0:
        raise UserError(f"max_concurrent_deletes should have value > 0, value: {value}")


def run_expire(ctx: OpContext, args: Arguments) -> Rows:
    check_max_concurrent_deletes(args)
    loaded = table_argument(ctx, args)
    check_gc_enabled(loaded.metadata, "expire snapshots")
    request = ExpireRequest(
        now_ms=ctx.now_ms(),
        older_than_ms=args.get("older_than"),
        retain_last=args.get("retain_last"),
        snapshot_ids=tuple(args.get("snapshot_ids") or ()),
        clean_expired_metadata=bool(args.get("clean_expired_metadata", False)),
    )
    counts = expire(ctx, loaded, request)
    return [
        (
            counts.data_files,
            counts.position_delete_files,
            counts.equality_delete_files,
            counts.manifests,
            counts.manifest_lists,
            counts.statistics_files,
        )
    ]


def expire(ctx: OpContext, loaded: LoadedTable, request: ExpireRequest) -> DeletedCounts:
    """Commit the expiry, then delete what it left unreachable; the counts deleted."""
    if expire_snapshots(loaded.metadata, request) is loaded.metadata:
        return DeletedCounts()  # nothing expires: no commit (Java's "Nothing to commit")
    bases: list[LoadedTable] = []

    def attempt(base: LoadedTable) -> PendingCommit:
        bases.append(base)
        return PendingCommit(expire_snapshots(base.metadata, request))

    commit(ctx.catalog, loaded.identifier, attempt, base=loaded)
    before = reachable_files(bases[-1].metadata, strict=False)
    current = ctx.catalog.load_table(loaded.identifier)
    try:
        after = reachable_files(current.metadata, strict=True, live_only=True)
    except (CorruptDataError, StorageError) as e:
        # what the table still needs cannot be known: delete nothing, say what happened
        raise type(e)(
            f"snapshots of {loaded.identifier} were expired, but no file was deleted: a file the "
            f"table still references cannot be read ({e.problem})",
            e.path,
        ) from e
    return delete_unreachable(before, after)


_COUNT = pa.int64()

PROCEDURE = Procedure(
    name="expire_snapshots",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("older_than", Kind.TIMESTAMP),
        Parameter("retain_last", Kind.INT),
        Parameter("max_concurrent_deletes", Kind.INT),
        Parameter("stream_results", Kind.BOOLEAN),
        Parameter("snapshot_ids", Kind.LONG_ARRAY),
        Parameter("clean_expired_metadata", Kind.BOOLEAN),
    ),
    output=pa.schema(
        [
            pa.field("deleted_data_files_count", _COUNT),
            pa.field("deleted_position_delete_files_count", _COUNT),
            pa.field("deleted_equality_delete_files_count", _COUNT),
            pa.field("deleted_manifest_files_count", _COUNT),
            pa.field("deleted_manifest_lists_count", _COUNT),
            pa.field("deleted_statistics_files_count", _COUNT),
        ]
    ),
    run=run_expire,
    summary="remove old snapshots and the files only they reached",
)

"""``CALL system.remove_orphan_files(table, older_than, location, dry_run,
max_concurrent_deletes, file_list_view, equal_schemes, equal_authorities,
prefix_mismatch_mode, prefix_listing)``: delete the files under the table's location that
no metadata of the table references (:mod:`iceduck.scan.orphans`); one row per orphan,
column ``orphan_file_location``.

Spark's procedure (Iceberg 1.10), with its checks and messages:

* ``older_than`` (default: three days ago) -- only files modified before it are touched;
  an explicit one less than 24 hours ago is refused, as the procedure refuses it outside
  Spark's tests: a concurrent write's files are not referenced yet, and only their age
  protects them;
* ``location`` (default: the table's location) -- a folder to list; iceduck refuses one
  outside the table's location, where other tables' files may live;
* ``dry_run`` -- list the orphans without deleting them;
* ``max_concurrent_deletes`` must be positive; deletes run one after another;
* ``equal_schemes``/``equal_authorities``/``prefix_mismatch_mode``/``prefix_listing``
  concern object-store URIs; on the local file system every form of a path compares
  equal, so they are accepted (``prefix_mismatch_mode`` must be ERROR, IGNORE or DELETE)
  and change nothing;
* ``file_list_view`` (compare against a Spark view of files) is not supported.

``gc.enabled=false`` refuses, as Java's action does. The locations returned are local
paths; an orphan that cannot be deleted (permissions) is left out of the result, where
Spark would list it as if it were gone.
"""

from __future__ import annotations

import pyarrow as pa

from iceduck.errors import UnsupportedError, UserError
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.ops.procedures.expire import check_max_concurrent_deletes
from iceduck.scan.orphans import orphan_files
from iceduck.txn.expire import check_gc_enabled
from iceduck.txn.file_cleanup import delete_file

DAY_MS = 24 * 60 * 60 * 1000
#: Java's ``DeleteOrphanFilesSparkAction`` default: files older than three days
DEFAULT_AGE_MS = 3 * DAY_MS
PREFIX_MISMATCH_MODES = ("ERROR", "IGNORE", "DELETE")


def run_remove_orphans(ctx: OpContext, args: Arguments) -> Rows:
    check_max_concurrent_deletes(args)
    if args.get("file_list_view") is not None:
        raise UnsupportedError(
            "remove_orphan_files: file_list_view is not supported (iceduck lists the location)"
        )
    mode = args.get("prefix_mismatch_mode")
    if mode is not None and mode.upper() not in PREFIX_MISMATCH_MODES:
        raise UserError(
            f"Invalid prefix mismatch mode: {mode} (it is one of {', '.join(PREFIX_MISMATCH_MODES)})"
        )
    now = ctx.now_ms()
    older_than = args.get("older_than")
    if older_than is None:
        older_than = now - DEFAULT_AGE_MS
    elif now - older_than < DAY_MS:
        raise UserError(
            "Cannot remove orphan files with an interval less than 24 hours. Executing this procedure "
            "with a short interval may corrupt the table if other operations are happening at the same time."
        )
    table = table_argument(ctx, args)
    check_gc_enabled(table.metadata, "remove orphan files")
    orphans = orphan_files(table, args.get("location", table.metadata.location), older_than)
    if not args.get("dry_run", False):
        orphans = [path for path in orphans if delete_file(path)]
    return [(path,) for path in orphans]


PROCEDURE = Procedure(
    name="remove_orphan_files",
    parameters=(
        Parameter("table", Kind.STRING, required=True),
        Parameter("older_than", Kind.TIMESTAMP),
        Parameter("location", Kind.STRING),
        Parameter("dry_run", Kind.BOOLEAN),
        Parameter("max_concurrent_deletes", Kind.INT),
        Parameter("file_list_view", Kind.STRING),
        Parameter("equal_schemes", Kind.STRING_MAP),
        Parameter("equal_authorities", Kind.STRING_MAP),
        Parameter("prefix_mismatch_mode", Kind.STRING),
        Parameter("prefix_listing", Kind.BOOLEAN),
    ),
    output=pa.schema([pa.field("orphan_file_location", pa.string(), nullable=False)]),
    run=run_remove_orphans,
    summary="delete files under the table's location that no metadata references",
)

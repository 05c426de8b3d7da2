"""``CALL system.compute_partition_stats(table, snapshot_id)``: write and register the
partition statistics file of a snapshot.

As Spark's procedure (Iceberg 1.10's ``ComputePartitionStatsSparkAction``): ``snapshot_id``
defaults to the current snapshot; the result is one row, ``partition_statistics_file``
(the file's location), or no row when there is nothing to compute (a table without
snapshots, or a snapshot without files). A snapshot that already has a registered file
gets that file back without a new computation. An unknown snapshot id is refused
("Snapshot not found"), as is a table that was never partitioned.

The counts come from the snapshot's manifests (:mod:`iceduck.scan.partition_stats`), the
file is Parquet with the spec's field ids (:mod:`iceduck.formats.partition_stats_file`),
written under the table's metadata folder as ``partition-stats-<snapshot id>-<uuid>.parquet``
(Java's name) and registered through the commit loop
(:mod:`iceduck.txn.partition_statistics`). iceduck always computes in full; Java may
update an ancestor's file incrementally, to the same counts.
"""

from __future__ import annotations

import uuid

import pyarrow as pa

from iceduck.errors import NotFoundError, UnsupportedError
from iceduck.formats.partition_stats_file import stats_schema, write_stats_file
from iceduck.io.fileio import write_new
from iceduck.ops.context import OpContext
from iceduck.ops.procedures.base import Arguments, Kind, Parameter, Procedure, Rows, table_argument
from iceduck.scan.partition_stats import is_partitioned, partition_stats
from iceduck.spec.properties import metadata_location
from iceduck.spec.snapshot import PartitionStatisticsFile
from iceduck.txn.partition_statistics import commit_partition_statistics

_DEFAULT_FILE_FORMAT = "write.format.default"


def compute_partition_stats(ctx: OpContext, args: Arguments) -> Rows:
    table = table_argument(ctx, args)
    metadata = table.metadata
    snapshot_id = args.get("snapshot_id", metadata.current_snapshot_id)
    if snapshot_id is None:
        return []
    snapshot = metadata.find_snapshot(snapshot_id)
    if snapshot is None:
        raise NotFoundError(f"Snapshot not found: {snapshot_id} (table {table.identifier})")
    if not is_partitioned(metadata):
        raise UnsupportedError(f"partition statistics need a partitioned table: {table.identifier} is not")
    existing = [s for s in metadata.partition_statistics if s.snapshot_id == snapshot_id]
    if existing:
        return [(existing[0].statistics_path,)]
    partition_type, stats = partition_stats(metadata, snapshot, ctx.manifests)
    if not stats:
        return []
    file_format = metadata.properties.get(_DEFAULT_FILE_FORMAT, "parquet").lower()
    if file_format != "parquet":
        raise UnsupportedError(
            f"partition statistics are written as Parquet only; table {table.identifier} "
            f"has {_DEFAULT_FILE_FORMAT}={file_format}"
        )
    fv = metadata.format_version
    data = write_stats_file(stats_schema(partition_type, fv), [s.row(fv) for s in stats])
    folder = metadata_location(metadata.properties, metadata.location)
    path = f"{folder}/partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"
    write_new(path, data)
    commit_partition_statistics(ctx.catalog, table, PartitionStatisticsFile(snapshot_id, path, len(data)))
    return [(path,)]


PROCEDURE = Procedure(
    name="compute_partition_stats",
    parameters=(Parameter("table", Kind.STRING, required=True), Parameter("snapshot_id", Kind.LONG)),
    output=pa.schema([pa.field("partition_statistics_file", pa.string())]),
    run=compute_partition_stats,
    summary="write and register a snapshot's partition statistics file",
)

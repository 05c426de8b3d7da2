"""Registering a snapshot's partition statistics file in the table metadata.

The spec: "Partition statistics file must be registered in the table metadata file to be
considered as a valid statistics file for the reader", in ``partition-statistics``
(``snapshot-id``, ``statistics-path``, ``file-size-in-bytes``), "at most one partition
statistics file" per snapshot. The file is written before the commit, so a crash before
the swap leaves an orphan file the metadata never names (``remove_orphan_files`` removes
it later) and the table as it was; a commit that certainly failed deletes it.
"""

from __future__ import annotations

from iceduck.catalog.base import Catalog, LoadedTable
from iceduck.errors import ValidationError
from iceduck.spec.snapshot import PartitionStatisticsFile
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit


def commit_partition_statistics(
    catalog: Catalog, table: LoadedTable, stats: PartitionStatisticsFile
) -> LoadedTable:
    """Commit ``stats`` as its snapshot's partition statistics file (replacing an earlier
    one, which expiry or orphan removal deletes later); a concurrent commit that expired the
    snapshot meanwhile makes this fail (ValidationError) and the file is deleted."""

    def attempt(base: LoadedTable) -> PendingCommit:
        if base.metadata.find_snapshot(stats.snapshot_id) is None:
            raise ValidationError(
                f"snapshot {stats.snapshot_id} of table {base.identifier} was removed by a concurrent commit"
            )
        builder = MetadataBuilder(base.metadata)
        builder.set_partition_statistics(stats)
        return PendingCommit(builder.build(), [])

    return commit(catalog, table.identifier, attempt, base=table, cleanup_on_failure=[stats.statistics_path])

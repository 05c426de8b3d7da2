"""Conflict checks of a snapshot commit against the commits made since the operation read the table.

Spec, "Commit Conflict Resolution and Retry": "Append operations have no requirements and
can always be applied. Replace operations must verify that the files that will be deleted
are still in the table. [...] Delete operations must verify that specific files to delete
are still in the table." Java adds, and iceduck follows (``MergingSnapshotProducer``):

* ``validateDataFilesExist``: the data files new position deletes refer to must still be
  live, else the deletes would point at rows someone else already removed or rewrote;
* ``validateNoNewDeletesForDataFiles``: a copy-on-write rewrite of a data file must fail if
  a delete file that may apply to it was added since the operation read the table, or
  those deleted rows would come back in the rewritten file;
* ``validateAddedDVs`` (v3): no deletion vector for the same data file may have been added
  concurrently ("one DV per data file").

* ``validateAddedDataFiles`` (serializable isolation only, :class:`ConflictDetection`):
  no data file added since the operation read the table may hold a row its condition
  matches. Spark's row-level operations default to ``serializable``
  (``write.delete.isolation-level`` and its siblings): a DELETE ... WHERE p = 1 that read
  the table before a concurrent INSERT of p = 1 rows would otherwise commit as if it ran
  after the INSERT yet leave the inserted rows, a result no serial order produces. Under
  ``snapshot`` isolation only the delete-file checks above apply.

Failures caused by a concurrent commit raise :class:`CommitConflictError` (re-running the
statement on the new state can succeed); a request that was wrong against the very state
it read (e.g. removing a file that is not in the table) raises :class:`ValidationError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from iceduck.errors import CommitConflictError, IceduckError, NotFoundError
from iceduck.scan.manifest_cache import ManifestCache, referenced_data_file
from iceduck.scan.planner import SpecFilter
from iceduck.scan.tasks import MATCH_ALL
from iceduck.spec.expressions.binding import bind
from iceduck.spec.expressions.metrics_evaluator import InclusiveMetricsEvaluator
from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression
from iceduck.spec.manifest import DataFile, EntryStatus, FileContent, ManifestContent
from iceduck.spec.snapshot import Operation, Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.summary import is_deletion_vector

#: Java ``VALIDATE_ADDED_DELETE_FILES_OPERATIONS``
_ADDS_DELETES = frozenset({Operation.OVERWRITE.value, Operation.DELETE.value})
#: Java ``VALIDATE_ADDED_DVS_OPERATIONS``
_ADDS_DVS = frozenset({Operation.OVERWRITE.value, Operation.DELETE.value, Operation.REPLACE.value})
#: Java ``VALIDATE_ADDED_FILES_OPERATIONS``: a REPLACE (compaction) adds no rows, a DELETE no data
_ADDS_DATA = frozenset({Operation.APPEND.value, Operation.OVERWRITE.value})

IsolationLevel = Literal["serializable", "snapshot"]
SERIALIZABLE: IsolationLevel = "serializable"
SNAPSHOT: IsolationLevel = "snapshot"
ISOLATION_LEVELS: tuple[IsolationLevel, ...] = (SERIALIZABLE, SNAPSHOT)


@dataclass(frozen=True)
class ConflictDetection:
    """Which concurrently added data files conflict with an operation (Java's
    ``conflictDetectionFilter`` plus ``validateNoConflictingData``).

    ``filter`` is the condition the operation's outcome depends on: DELETE's and UPDATE's
    WHERE, what MERGE's ON condition implies about the target, a static overwrite's
    partition values. It may be unbound (column names: bound to the table's current
    schema when checked) or, as the ops pass it, bound to the schema the operation read
    (``ScanPlan.row_filter``), which keeps its meaning by field id if a column is renamed
    concurrently. ``partitions`` narrows the check to those (spec id, partition tuple)
    pairs, as Java's ``ReplacePartitions`` does with the partitions a dynamic overwrite
    replaces. Only ``serializable`` checks anything: under ``snapshot`` isolation a
    concurrent append never conflicts.
    """

    #: the statement and table, for the error message (``DELETE FROM ns.t``)
    operation: str
    isolation: IsolationLevel = SERIALIZABLE
    filter: BooleanExpression = MATCH_ALL
    partitions: tuple[tuple[int, tuple[Any, ...]], ...] | None = None
    #: the table property that chose the level (named in the error: how to relax it)
    level_property: str | None = None


def snapshots_since(metadata: TableMetadata, head: Snapshot | None, since_id: int | None) -> list[Snapshot]:
    """The ancestors of ``head`` (itself included) newer than snapshot ``since_id``, newest
    first; all of them when ``since_id`` is None (the operation read an empty branch).

    Raises :class:`CommitConflictError` when ``since_id`` is not an ancestor of the head
    (the branch was replaced or rolled back under the operation: Java's "Cannot determine
    history between starting snapshot ... and the last known ancestor").
    """
    out: list[Snapshot] = []
    current = head
    while current is not None and current.snapshot_id != since_id:
        out.append(current)
        parent = current.parent_snapshot_id
        try:
            current = None if parent is None else metadata.snapshot_by_id(parent)
        except NotFoundError:
            current = None  # expired history
    if current is None and since_id is not None:
        raise CommitConflictError(
            f"cannot determine the history since snapshot {since_id}: it is no longer an ancestor "
            f"of the branch head {head.snapshot_id if head else None}"
        )
    return out


def added_delete_files(
    metadata: TableMetadata, snapshots: Iterable[Snapshot], cache: ManifestCache, operations: frozenset[str]
) -> list[tuple[Snapshot, DataFile]]:
    """The delete files each snapshot added itself (those with an ``operations`` operation)."""
    return _added_files(metadata, snapshots, cache, operations, data=False)


def added_data_files(
    metadata: TableMetadata, snapshots: Iterable[Snapshot], cache: ManifestCache
) -> list[tuple[Snapshot, DataFile]]:
    """The data files each appending or overwriting snapshot added itself (existing
    entries a snapshot carried over are not new rows)."""
    return _added_files(metadata, snapshots, cache, _ADDS_DATA, data=True)


def _added_files(
    metadata: TableMetadata,
    snapshots: Iterable[Snapshot],
    cache: ManifestCache,
    operations: frozenset[str],
    data: bool,
) -> list[tuple[Snapshot, DataFile]]:
    specs = metadata.specs_by_id()
    out = []
    for s in snapshots:
        if s.operation not in operations:
            continue
        for m in cache.snapshot_manifests(s, metadata.format_version):
            if (m.content is ManifestContent.DATA) != data or m.added_snapshot_id != s.snapshot_id:
                continue
            for e in cache.parsed_manifest(m, specs).live:
                if e.status is EntryStatus.ADDED and e.snapshot_id == s.snapshot_id:
                    out.append((s, e.data_file))
    return out


def may_apply(delete: DataFile, data: DataFile, unpartitioned_specs: frozenset[int]) -> bool:
    """Whether a delete file may delete rows of a data file (scope rules of "Scan Planning",
    read conservatively: same partition, or a global equality delete)."""
    if delete.content is FileContent.POSITION_DELETES:
        ref = referenced_data_file(delete)
        if ref is not None:
            return ref == data.file_path
    elif delete.spec_id in unpartitioned_specs:
        return True  # "Equality delete files stored with an unpartitioned spec are applied as global deletes"
    return delete.spec_id == data.spec_id and delete.partition == data.partition


def check_no_new_deletes(
    metadata: TableMetadata,
    since: Sequence[Snapshot],
    files: Sequence[DataFile],
    cache: ManifestCache,
    ignore_equality_deletes: bool = False,
) -> None:
    """CoW: no delete file added since the read may apply to a rewritten data file.

    ``ignore_equality_deletes``: the new files keep the data sequence number of the
    snapshot the operation read (a compaction), so an equality delete added since still
    applies to them ("the data file's data sequence number is strictly less than the
    delete's") and is no conflict -- Java's ``ignoreEqualityDeletes`` when a rewrite sets
    the new files' data sequence number."""
    if not files or not since:
        return
    unpartitioned = frozenset(s.spec_id for s in metadata.partition_specs if s.is_unpartitioned)
    for snapshot, delete in added_delete_files(metadata, since, cache, _ADDS_DELETES):
        if ignore_equality_deletes and delete.content is FileContent.EQUALITY_DELETES:
            continue
        for f in files:
            if may_apply(delete, f, unpartitioned):
                raise CommitConflictError(
                    f"found new delete file {delete.file_path} for data file {f.file_path}, added by "
                    f"concurrent snapshot {snapshot.snapshot_id}: the rewrite would resurrect deleted rows"
                )


def check_no_concurrent_dvs(
    metadata: TableMetadata, since: Sequence[Snapshot], added: Sequence[DataFile], cache: ManifestCache
) -> None:
    """v3: a data file gets at most one DV; one added concurrently for the same file conflicts."""
    targets = {referenced_data_file(f) for f in added if is_deletion_vector(f)}
    if not targets or not since:
        return
    for snapshot, delete in added_delete_files(metadata, since, cache, _ADDS_DVS):
        ref = referenced_data_file(delete)
        if is_deletion_vector(delete) and ref in targets:
            raise CommitConflictError(
                f"found concurrently added deletion vector for {ref} (snapshot {snapshot.snapshot_id}); "
                "a data file can have only one"
            )


def check_files_live(required: Iterable[str], live: set[str] | dict[str, DataFile], branch: str) -> None:
    """Data files that new deletes reference must be live at the branch head."""
    missing = sorted(p for p in set(required) if p not in live)
    if missing:
        raise CommitConflictError(
            f"cannot commit deletes for data files no longer in branch {branch} "
            f"(removed by a concurrent commit): {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        )


class _FileMatcher:
    """Whether a data file may hold a row of a filter: the scan planner's two inclusive
    tests, partition tuple (inclusive projection onto the file's spec) then column
    metrics, so a file that cannot match is never reported and one that may always is."""

    def __init__(self, metadata: TableMetadata, row_filter: BooleanExpression) -> None:
        self.specs = metadata.specs_by_id()
        self.schema = metadata.schema()
        self.match_all = isinstance(row_filter, AlwaysTrue)
        self._spec_filters: dict[int, SpecFilter] = {}
        if self.match_all:
            return
        try:
            self.bound = bind(self.schema, row_filter)
            self.metrics = InclusiveMetricsEvaluator(self.schema, self.bound)
        except IceduckError:  # a column the filter names is gone: assume every file may match
            self.match_all = True

    def may_match(self, f: DataFile) -> bool:
        if self.match_all:
            return True
        spec_filter = self._spec_filters.get(f.spec_id)
        if spec_filter is None:
            spec = self.specs.get(f.spec_id)
            if spec is None:
                return True
            try:
                spec_filter = SpecFilter(spec, self.schema, self.bound, True)
            except IceduckError:
                return True
            self._spec_filters[f.spec_id] = spec_filter
        if spec_filter.residual(f.partition) is None:
            return False
        return self.metrics.may_match(f)


def check_no_conflicting_data(
    metadata: TableMetadata, since: Sequence[Snapshot], detection: ConflictDetection, cache: ManifestCache
) -> None:
    """Serializable isolation: no data file added since the read may hold a row the
    operation's condition matches (Java ``validateAddedDataFiles``)."""
    if detection.isolation != SERIALIZABLE or not since:
        return
    matcher = _FileMatcher(metadata, detection.filter)
    partitions = detection.partitions
    for snapshot, f in added_data_files(metadata, since, cache):
        if partitions is not None and (f.spec_id, f.partition) not in partitions:
            continue
        if matcher.may_match(f):
            prop = detection.level_property
            hint = f"; set {prop}=snapshot to allow it" if prop else ""
            raise CommitConflictError(
                f"{detection.operation}: found conflicting data file {f.file_path}, added by concurrent "
                f"snapshot {snapshot.snapshot_id}, that may hold rows matching {detection.filter} "
                f"(serializable isolation{hint}); re-run the statement"
            )

"""The plain-data contract between the scan planner and the engine.

Planning (``iceduck.scan.planner``) walks the metadata index and ends here: a
:class:`ScanPlan` of :class:`FileScanTask` rows, each a data file to read plus the delete
files that apply to it. The engine (``iceduck.engine``) turns a plan into a DuckDB
relation and never looks at manifests; the planner never imports DuckDB. Everything here
is immutable plain data, so plans can be cached, printed by EXPLAIN and compared in tests.

Delete scope (spec, "Scan Planning"), already resolved by the planner:

* a position delete file or deletion vector applies to a data file when the data file's
  data sequence number is <= the delete's, the partition matches (or the delete's spec
  is unpartitioned), and the delete may reference the file; a deletion vector replaces
  any position-delete file for the same data file;
* an equality delete file applies when the data file's data sequence number is
  *strictly less* than the delete's, and the partition matches -- or the delete was
  written with an unpartitioned spec ("global" equality deletes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from iceduck.spec.expressions.predicates import AlwaysTrue, BooleanExpression
from iceduck.spec.manifest import FileContent, FileFormat
from iceduck.spec.schema import Schema

#: frozen, so one instance serves as every default
MATCH_ALL: BooleanExpression = AlwaysTrue()


@dataclass(frozen=True)
class DeleteFile:
    """A delete file (or one deletion-vector blob) that applies to some data files."""

    path: str
    content: FileContent
    file_format: FileFormat
    #: data sequence number of the delete (scope rules above)
    sequence_number: int
    record_count: int
    file_size_in_bytes: int
    #: equality deletes: the field ids that identify a deleted row
    equality_ids: tuple[int, ...] = ()
    #: position deletes / DVs: the one data file all rows refer to, when known
    referenced_data_file: str | None = None
    #: deletion vectors: the Puffin blob's range
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    spec_id: int = 0
    partition: tuple[Any, ...] = ()

    @property
    def is_deletion_vector(self) -> bool:
        return self.file_format is FileFormat.PUFFIN


@dataclass(frozen=True)
class FileScanTask:
    """One data file to read, with everything needed to read it correctly."""

    path: str
    file_format: FileFormat
    record_count: int
    file_size_in_bytes: int
    spec_id: int
    partition: tuple[Any, ...]
    #: data sequence number of the data file (for equality-delete scope)
    data_sequence_number: int
    #: v3 row lineage; None when unassigned
    first_row_id: int | None = None
    #: field id -> value for identity-partitioned columns, used when the file lacks them
    identity_values: dict[int, Any] = field(default_factory=dict, hash=False)
    #: a deletion vector, or else the position-delete files that may hold this file's rows
    deletion_vector: DeleteFile | None = None
    position_deletes: tuple[DeleteFile, ...] = ()
    equality_deletes: tuple[DeleteFile, ...] = ()
    #: the part of the row filter partition values do not already decide
    residual: BooleanExpression = MATCH_ALL

    @property
    def has_deletes(self) -> bool:
        return self.deletion_vector is not None or bool(self.position_deletes or self.equality_deletes)


@dataclass(frozen=True)
class ScanStats:
    """Planning counters: what the metadata index let the planner skip (shown by EXPLAIN)."""

    manifests_total: int = 0
    manifests_read: int = 0
    manifests_skipped: int = 0
    data_files_total: int = 0
    data_files_read: int = 0
    data_files_skipped_by_partition: int = 0
    data_files_skipped_by_metrics: int = 0
    delete_files_applied: int = 0


@dataclass(frozen=True)
class ScanPlan:
    """The result of planning one table scan."""

    #: the schema rows are read with (the snapshot's schema for time travel)
    schema: Schema
    snapshot_id: int | None
    tasks: tuple[FileScanTask, ...]
    row_filter: BooleanExpression = MATCH_ALL
    stats: ScanStats = ScanStats()
    #: ``schema.name-mapping.default`` (JSON text) for files written without field ids
    name_mapping: str | None = None
    #: what the engine derived from this plan alone, by what it asked (the SELECT it wrote
    #: per column set, :func:`iceduck.engine.read.attach_scan`): a cached plan is shared by
    #: the statements that read the same table version (:mod:`iceduck.scan.plan_cache`), and
    #: so is what follows from it; not part of the plan's value, and not carried over by
    #: ``dataclasses.replace`` (a plan with other tasks derives its own)
    derived: dict[Any, Any] = field(default_factory=dict, init=False, compare=False, repr=False, hash=False)

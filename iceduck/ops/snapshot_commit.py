"""Committing a DML statement's files as one snapshot, and cleaning up when it fails.

Every data operation ends the same way: the files it wrote become a
:class:`~iceduck.txn.snapshot.SnapshotChanges`, :func:`iceduck.txn.snapshot.produce`
builds the manifests, manifest list and snapshot on whatever base the commit attempt is
given, and :func:`iceduck.txn.commit.commit` swaps the metadata with retries ("Commit
Conflict Resolution and Retry": appends always apply; deletes and rewrites re-validate
their files on the refreshed base). A failed statement leaves no snapshot behind and
cleans up the files it wrote: :class:`WrittenFiles` deletes them on any error before the
commit, and the commit deletes them when it finally fails -- unless the swap
may have landed, when every file is kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from types import TracebackType

from iceduck.catalog.base import LoadedTable
from iceduck.engine.write import FileTarget
from iceduck.errors import ValidationError
from iceduck.io import fileio
from iceduck.ops.context import OpContext, WriteTarget
from iceduck.ops.wap import staged_wap_id
from iceduck.spec import properties as props
from iceduck.spec.manifest import DataFile
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.cherrypick import WAP_ID
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.snapshot import SnapshotChanges, produce
from iceduck.txn.validation import ISOLATION_LEVELS, IsolationLevel


def data_location(metadata: TableMetadata) -> str:
    """Where new data and delete files go: ``write.data.path``, else ``<location>/data``."""
    return props.data_location(metadata.properties, metadata.location)


def file_target(metadata: TableMetadata) -> FileTarget:
    """What the file writer needs to know about the table (current schema, spec, order)."""
    return FileTarget(
        schema=metadata.schema(),
        spec=metadata.spec(),
        sort_order=metadata.sort_order(),
        properties=metadata.properties,
        data_location=data_location(metadata),
        format_version=metadata.format_version,
    )


def row_level_mode(metadata: TableMetadata, prop: str) -> str:
    """``write.delete.mode`` / ``write.update.mode`` / ``write.merge.mode`` (default
    copy-on-write, as Java's ``TableProperties``)."""
    return props.row_level_mode(metadata.properties, prop)


def isolation_level(metadata: TableMetadata, prop: str) -> IsolationLevel:
    """``write.delete.isolation-level`` / ``write.update.isolation-level`` /
    ``write.merge.isolation-level``: ``serializable`` (default, as Java's
    ``TableProperties``) or ``snapshot``, without case as Java's ``IsolationLevel.fromName``."""
    value = metadata.properties.get(prop, props.ISOLATION_LEVEL_DEFAULT).strip().lower()
    for level in ISOLATION_LEVELS:
        if value == level:
            return level
    raise ValidationError(f"table property {prop}={value!r}: use serializable or snapshot")


@dataclass
class WrittenFiles:
    """Files a statement wrote; deleted when the statement fails before committing.

    Use as a context manager around writing: an exception leaving the block deletes every
    recorded file. The files are handed to the commit with :meth:`take` *before* the
    catalog is asked to swap: from then on only the commit may delete them, and only when
    the swap certainly did not land (:mod:`iceduck.catalog.commit_outcome`) -- an
    interrupt arriving just after the swap must not delete files the table now references.
    """

    paths: list[str] = field(default_factory=list)

    def add(self, files: Iterable[DataFile]) -> list[DataFile]:
        files = list(files)
        for f in files:
            if f.file_path not in self.paths:
                self.paths.append(f.file_path)
        return files

    def __enter__(self) -> WrittenFiles:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.delete()

    def take(self) -> tuple[str, ...]:
        """Hand the files over to a commit: this object forgets them."""
        paths, self.paths = tuple(self.paths), []
        return paths

    def delete(self) -> None:
        for path in self.paths:
            try:
                fileio.delete(path)
            except Exception:  # best effort: the original error matters more
                pass


def commit_changes(
    ctx: OpContext, target: WriteTarget, changes: SnapshotChanges, written: WrittenFiles
) -> LoadedTable:
    """Commit ``changes`` to the target's branch; the new table state. With a
    write-audit-publish id in effect (:mod:`iceduck.ops.wap`) the snapshot is staged
    instead: added with summary ``wap.id``, no branch moved."""
    wap_id = staged_wap_id(ctx, target.table.metadata)
    if wap_id is not None:
        changes = replace(changes, summary_extra={**changes.summary_extra, WAP_ID: wap_id})

    def attempt(base: LoadedTable) -> PendingCommit:
        return produce(
            base.metadata,
            changes,
            branch=target.branch,
            table_location=base.metadata.location,
            cache=ctx.manifests,
            stage_only=wap_id is not None,
        )

    owned = written.take()
    return commit(ctx.catalog, target.identifier, attempt, base=target.table, cleanup_on_failure=owned)

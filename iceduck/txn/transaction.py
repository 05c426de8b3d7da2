"""A transaction across statements and tables: its commits are kept, then swapped at once.

Between ``BEGIN`` and ``COMMIT`` a session reads and writes through a :class:`Transaction`,
a catalog in front of the real one:

* ``load_table`` of a table the transaction changed answers its *pending* metadata, so a
  statement sees the transaction's earlier statements (read-your-writes: scans, time
  travel and metadata tables show the committed snapshots plus the pending ones); a table
  it has not changed is loaded from the catalog as usual;
* a statement's commit (:func:`iceduck.txn.commit.commit`, which sees a
  :class:`~iceduck.txn.commit.DeferringCatalog`) runs the statement's ``attempt`` on the
  pending metadata -- with the same validations as a single statement -- and keeps the
  result instead of swapping it: one snapshot per statement, as Java's ``Transaction``
  keeps one per pending update (``BaseTransaction.commitTransaction`` applies them in
  order, each a snapshot of its own);
* table DDL is refused: only snapshots are deferred.

:meth:`Transaction.commit` swaps every changed table in one catalog call,
:meth:`Catalog.commit_tables <iceduck.catalog.base.Catalog.commit_tables>` (one SQLite or
PostgreSQL transaction, the REST ``/v1/transactions/commit``), so other readers see all
of the tables changed or none; one table goes through ``commit_table``. When another
writer committed meanwhile, the catalog answers CommitConflictError and the whole
transaction is tried again under the first table's ``commit.retry.*`` policy: a table
that moved on has its statements run again on the fresh metadata
(:mod:`iceduck.txn.replay`), re-validated as single statements are on retry; if one
cannot be rebased (a serializable DELETE whose rows another writer changed), nothing is
committed anywhere.

Files. Every file a statement wrote (data and delete files, manifests, manifest lists)
is the transaction's; :meth:`rollback` and a failed :meth:`commit` delete them all, the
latter only when the swap certainly did not land
(:func:`~iceduck.catalog.commit_outcome.certainly_not_committed`). A process killed
inside the transaction leaves only unreferenced files (``remove_orphan_files`` takes
them), never part of a commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from iceduck.catalog.base import Catalog, LoadedTable, LoadedView, Namespace, TableIdentifier
from iceduck.catalog.commit_outcome import certainly_not_committed
from iceduck.catalog.filesystem import HadoopCatalog
from iceduck.catalog.metadata_files import delete_quietly
from iceduck.errors import CommitConflictError, UnsupportedError
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.view_metadata import ViewMetadata
from iceduck.txn.commit import PendingCommit, RetryPolicy, check_same_table
from iceduck.txn.replay import REPLAYING, Replay, origins

Attempt = Callable[[LoadedTable], PendingCommit]


@dataclass
class _Changed:
    """One table the transaction changed."""

    #: the table as the transaction first loaded it
    base: LoadedTable
    #: the table after the transaction's statements (``base`` plus their snapshots)
    pending: LoadedTable
    #: the statements' commit attempts, in order: what runs again on a fresher base
    attempts: list[Attempt] = field(default_factory=list)
    #: manifests and manifest lists of the pending snapshots
    written: list[str] = field(default_factory=list)
    #: data and delete files the statements wrote
    files: list[str] = field(default_factory=list)


class Transaction:
    """The catalog a session uses between BEGIN and COMMIT (see the module docstring)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.name = catalog.name
        self._changed: dict[TableIdentifier, _Changed] = {}

    @property
    def tables(self) -> list[TableIdentifier]:
        """The tables changed so far, in the order first changed."""
        return list(self._changed)

    # -- reads: the catalog's, with the transaction's pending tables ----------------------

    def load_table(self, identifier: TableIdentifier) -> LoadedTable:
        changed = self._changed.get(identifier)
        return changed.pending if changed is not None else self.catalog.load_table(identifier)

    def table_exists(self, identifier: TableIdentifier) -> bool:
        return identifier in self._changed or self.catalog.table_exists(identifier)

    def list_namespaces(self, parent: Namespace = ()) -> list[Namespace]:
        return self.catalog.list_namespaces(parent)

    def namespace_exists(self, namespace: Namespace) -> bool:
        return self.catalog.namespace_exists(namespace)

    def load_namespace_properties(self, namespace: Namespace) -> dict[str, str]:
        return self.catalog.load_namespace_properties(namespace)

    def list_tables(self, namespace: Namespace) -> list[TableIdentifier]:
        return self.catalog.list_tables(namespace)

    def default_table_location(self, identifier: TableIdentifier) -> str:
        return self.catalog.default_table_location(identifier)

    def list_views(self, namespace: Namespace) -> list[TableIdentifier]:
        return self.catalog.list_views(namespace)

    def view_exists(self, identifier: TableIdentifier) -> bool:
        return self.catalog.view_exists(identifier)

    def load_view(self, identifier: TableIdentifier) -> LoadedView:
        return self.catalog.load_view(identifier)

    def default_view_location(self, identifier: TableIdentifier) -> str:
        return self.catalog.default_view_location(identifier)

    # -- writes: snapshots deferred, DDL refused ------------------------------------------

    def defer_commit(
        self,
        identifier: TableIdentifier,
        attempt: Attempt,
        base: LoadedTable,
        cleanup_on_failure: Sequence[str],
    ) -> LoadedTable:
        """Run ``attempt`` on the table's pending state and keep the result; the new pending
        table. A failing attempt deletes the statement's files and leaves the transaction
        as it was before the statement."""
        changed = self._changed.get(identifier)
        try:
            if changed is None and self._changed and isinstance(self.catalog, HadoopCatalog):
                raise UnsupportedError(
                    f"cannot change table '{identifier}' in this transaction: it already changed "
                    f"'{next(iter(self._changed))}', and a file-system (Hadoop) catalog cannot "
                    "commit to several tables atomically; COMMIT first"
                )
            current = changed.pending if changed is not None else base
            pending = attempt(current)
        except BaseException:
            for location in cleanup_on_failure:
                delete_quietly(location)
            raise
        new = LoadedTable(identifier, current.metadata_location, pending.metadata)
        if changed is None:
            changed = self._changed[identifier] = _Changed(base=current, pending=new)
        changed.pending = new
        changed.attempts.append(attempt)
        changed.written.extend(pending.written)
        changed.files.extend(cleanup_on_failure)
        return new

    def commit_table(self, base: LoadedTable, metadata: TableMetadata) -> LoadedTable:
        raise UnsupportedError(
            f"cannot change the metadata of table '{base.identifier}' inside a transaction"
        )

    def commit_tables(self, changes: Sequence[tuple[LoadedTable, TableMetadata]]) -> list[LoadedTable]:
        raise UnsupportedError("cannot commit tables inside a transaction: COMMIT does")

    def create_namespace(self, namespace: Namespace, properties: dict[str, str] | None = None) -> None:
        raise _ddl("create namespace", ".".join(namespace))

    def update_namespace_properties(
        self, namespace: Namespace, updates: dict[str, str], removals: list[str]
    ) -> tuple[list[str], list[str], list[str]]:
        raise _ddl("alter namespace", ".".join(namespace))

    def drop_namespace(self, namespace: Namespace) -> None:
        raise _ddl("drop namespace", ".".join(namespace))

    def create_table(self, identifier: TableIdentifier, metadata: TableMetadata) -> LoadedTable:
        raise _ddl("create table", str(identifier))

    def register_table(self, identifier: TableIdentifier, metadata_location: str) -> LoadedTable:
        raise _ddl("register table", str(identifier))

    def drop_table(self, identifier: TableIdentifier, purge: bool = False) -> None:
        raise _ddl("drop table", str(identifier))

    def rename_table(self, source: TableIdentifier, target: TableIdentifier) -> None:
        raise _ddl("rename table", str(source))

    # views are DDL too: not part of a transaction's atomic swap of tables

    def create_view(self, identifier: TableIdentifier, metadata: ViewMetadata) -> LoadedView:
        raise _ddl("create view", str(identifier))

    def commit_view(self, base: LoadedView, metadata: ViewMetadata) -> LoadedView:
        raise _ddl("alter view", str(base.identifier))

    def drop_view(self, identifier: TableIdentifier) -> None:
        raise _ddl("drop view", str(identifier))

    def rename_view(self, source: TableIdentifier, target: TableIdentifier) -> None:
        raise _ddl("rename view", str(source))

    def register_view(self, identifier: TableIdentifier, metadata_location: str) -> LoadedView:
        raise _ddl("register view", str(identifier))

    # -- the end ----------------------------------------------------------------------------

    def commit(self, sleep: Callable[[float], None] = time.sleep) -> list[LoadedTable]:
        """Swap every changed table at once (see the module docstring); the committed
        tables. On failure nothing is committed, the transaction's files are deleted
        (unless the swap may have landed) and the error raised; either way the
        transaction is over."""
        entries = list(self._changed.values())
        self._changed = {}
        if not entries:
            return []
        policy = RetryPolicy.from_properties(entries[0].base.metadata.properties)
        written: dict[str, None] = {}
        for entry in entries:
            written.update(dict.fromkeys(entry.written))
        files = [f for entry in entries for f in entry.files]
        started = time.monotonic()
        tries = 0
        while True:
            tries += 1
            try:
                changes, kept = _changes(self.catalog, entries, written, fresh=tries > 1)
            except BaseException:
                _delete([*written, *files])
                raise
            try:
                if len(changes) == 1:
                    committed = [self.catalog.commit_table(*changes[0])]
                else:
                    committed = self.catalog.commit_tables(changes)
            except CommitConflictError as e:
                elapsed_ms = (time.monotonic() - started) * 1000
                if tries > policy.num_retries or elapsed_ms >= policy.total_timeout_ms:
                    _delete([*written, *files])
                    names = ", ".join(f"'{entry.base.identifier}'" for entry in entries)
                    raise CommitConflictError(
                        f"cannot commit the transaction on {names}: the tables kept changing "
                        f"under it ({tries} attempt{'s' if tries > 1 else ''}; last conflict: {e}); "
                        "nothing was committed"
                    ) from e
                sleep(policy.wait_ms(tries) / 1000)
                continue
            except BaseException as e:
                if certainly_not_committed(e):
                    _delete([*written, *files])
                raise
            _delete([location for location in written if location not in kept])
            return committed

    def rollback(self) -> None:
        """Forget the transaction and delete every file it wrote (none was committed)."""
        entries = list(self._changed.values())
        self._changed = {}
        _delete([location for entry in entries for location in (*entry.written, *entry.files)])


def _changes(
    catalog: Catalog, entries: list[_Changed], written: dict[str, None], *, fresh: bool
) -> tuple[list[tuple[LoadedTable, TableMetadata]], set[str]]:
    """What to swap for each table -- its base and new metadata -- and the files the new
    metadata references. The first try swaps the pending metadata on the bases first
    loaded; after a conflict each table is reloaded, and one that moved on has its
    statements run again on the fresh metadata (files they write join ``written``)."""
    changes: list[tuple[LoadedTable, TableMetadata]] = []
    kept: set[str] = set()
    for entry in entries:
        current = catalog.load_table(entry.base.identifier) if fresh else entry.base
        if current.metadata_location == entry.base.metadata_location:
            changes.append((current, entry.pending.metadata))
            kept.update(entry.written)
            continue
        check_same_table(entry.base, current)
        replay = Replay(origins(entry.pending.metadata, entry.base.metadata))
        token = REPLAYING.set(replay)
        try:
            table = current
            for attempt in entry.attempts:
                before = {s.snapshot_id for s in table.metadata.snapshots}
                pending = attempt(table)
                written.update(dict.fromkeys(pending.written))
                kept.update(pending.written)
                made = {s.snapshot_id for s in pending.metadata.snapshots} - before
                replay.replayed.update(made)
                table = LoadedTable(current.identifier, current.metadata_location, pending.metadata)
        finally:
            REPLAYING.reset(token)
        changes.append((current, table.metadata))
    return changes, kept


def _ddl(action: str, name: str) -> UnsupportedError:
    return UnsupportedError(f"cannot {action} '{name}' inside a transaction: COMMIT or ROLLBACK first")


def _delete(locations: Sequence[str]) -> None:
    for location in locations:
        delete_quietly(location)

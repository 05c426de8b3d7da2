"""The commit loop: optimistic concurrency with retries, as Java's ``SnapshotProducer.commit``.

A write builds its change on the table as loaded (the *base*) and asks the catalog to swap
the metadata only if the base is still current. When another writer got there first, the
catalog says :class:`~iceduck.errors.CommitConflictError`; the spec's answer ("Commit
Conflict Resolution and Retry") is to refresh, re-apply the change to the new current
metadata -- re-checking the operation's conditions -- and try again. Here the operation
is the ``attempt`` callable: given a base it validates and builds a
:class:`PendingCommit`, or gives up by raising.

Retries follow the table's properties, with Java's names and defaults:
``commit.retry.num-retries`` (4 retries, so 5 attempts), waits growing from
``commit.retry.min-wait-ms`` (100) doubling up to ``commit.retry.max-wait-ms`` (60000)
with up to 10% jitter (Java's ``Tasks``), and no new attempt after
``commit.retry.total-timeout-ms`` (30 min).

Same table. A retry reloads the table by name, and the name may meanwhile belong to
another table: dropped and re-created, or renamed away with a new table created in its
place. Writing the statement's rows into that table would put them where they do not
belong (bigints read as strings). As Java's ``BaseMetastoreTableOperations`` refuses a
refresh whose ``table-uuid`` differs ("Table UUID does not match"), every retry checks
that the reloaded table is the one the statement started on (:func:`check_same_table`):
the same UUID, the same location (where the statement's files were written) and the same
format version (which decides what those files may be: v3 tables take deletion vectors,
not position-delete files).

Cleanup. Files written for attempts that did not land (manifests, manifest lists) are
deleted once the loop ends -- not at once, so a later attempt may reuse an earlier
attempt's manifest by listing it again in its own ``written``, and it is kept when that
attempt lands. When the statement fails for good, the files it wrote before the loop
(``cleanup_on_failure``: its data files) go too, so a failed statement leaves nothing
behind -- but only when the failure proves that the swap did not happen
(:func:`~iceduck.catalog.commit_outcome.certainly_not_committed`). After an interrupt or
:class:`~iceduck.errors.CommitStateUnknownError` during the swap nothing is deleted: the
catalog may point at those files now (Java's ``CommitStateUnknownException``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from iceduck.catalog.base import Catalog, LoadedTable, TableIdentifier
from iceduck.catalog.commit_outcome import certainly_not_committed
from iceduck.catalog.metadata_files import delete_quietly
from iceduck.errors import CommitConflictError
from iceduck.spec import properties as props
from iceduck.spec.table_metadata import TableMetadata


@dataclass
class PendingCommit:
    #: the new metadata, built on the base the attempt was given
    metadata: TableMetadata
    #: files this attempt wrote (manifests, manifest list): deleted if it does not land
    written: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RetryPolicy:
    num_retries: int = props.COMMIT_NUM_RETRIES_DEFAULT
    min_wait_ms: int = props.COMMIT_MIN_RETRY_WAIT_MS_DEFAULT
    max_wait_ms: int = props.COMMIT_MAX_RETRY_WAIT_MS_DEFAULT
    total_timeout_ms: int = props.COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT

    @classmethod
    def from_properties(cls, properties: dict[str, str]) -> RetryPolicy:
        """Read leniently, as Java's ``propertyTryAsInt``: an unreadable value falls back to
        the default, so a table carrying one (another writer set it) still takes the
        ``ALTER TABLE ... SET TBLPROPERTIES`` that repairs it."""

        def read(name: str, default: int) -> int:
            return max(0, props.try_int_property(properties, name, default))

        return cls(
            num_retries=read(props.COMMIT_NUM_RETRIES, props.COMMIT_NUM_RETRIES_DEFAULT),
            min_wait_ms=read(props.COMMIT_MIN_RETRY_WAIT_MS, props.COMMIT_MIN_RETRY_WAIT_MS_DEFAULT),
            max_wait_ms=read(props.COMMIT_MAX_RETRY_WAIT_MS, props.COMMIT_MAX_RETRY_WAIT_MS_DEFAULT),
            total_timeout_ms=read(
                props.COMMIT_TOTAL_RETRY_TIME_MS, props.COMMIT_TOTAL_RETRY_TIME_MS_DEFAULT
            ),
        )

    def wait_ms(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1-based): min * 2^(retry-1), capped at max,
        plus up to 10% jitter (Java's ``Tasks.runTaskWithRetry``)."""
        delay = min(self.min_wait_ms * 2 ** (retry - 1), self.max_wait_ms)
        return delay + random.uniform(0, delay * 0.1)


@runtime_checkable
class DeferringCatalog(Protocol):
    """A catalog that takes commits into an open transaction instead of swapping them
    (:class:`iceduck.txn.transaction.Transaction`): :func:`commit` hands it the attempt,
    which it runs on the transaction's pending state and runs again at COMMIT if the table
    moved on meanwhile."""

    def defer_commit(
        self,
        identifier: TableIdentifier,
        attempt: Callable[[LoadedTable], PendingCommit],
        base: LoadedTable,
        cleanup_on_failure: Sequence[str],
    ) -> LoadedTable: ...


def commit(
    catalog: Catalog,
    identifier: TableIdentifier,
    attempt: Callable[[LoadedTable], PendingCommit],
    *,
    base: LoadedTable | None = None,
    cleanup_on_failure: Sequence[str] = (),
    sleep: Callable[[float], None] = time.sleep,
) -> LoadedTable:
    """Commit the change ``attempt`` builds, retrying on conflicts; the committed table.

    The first attempt runs on ``base`` (or a fresh load); after a conflict the table is
    reloaded and ``attempt`` runs again on the new state (it may raise to give up: its
    ValidationError or CommitConflictError ends the loop). The retry policy is read from
    the properties of the table as first loaded. A retry on a table that is not the one
    first loaded (:func:`check_same_table`) gives up. On final failure every file the
    attempts wrote and ``cleanup_on_failure`` are deleted -- unless the swap may have landed
    (an interrupt, :class:`~iceduck.errors.CommitStateUnknownError`), when all are kept --
    and the error raised; when retries run out it is a CommitConflictError naming the
    table and the number of attempts. Inside a transaction (a :class:`DeferringCatalog`)
    nothing is swapped: the transaction keeps the change until COMMIT.
    """
    first = current = base if base is not None else catalog.load_table(identifier)
    if isinstance(catalog, DeferringCatalog):  # inside a transaction: COMMIT swaps it
        return catalog.defer_commit(identifier, attempt, first, cleanup_on_failure)
    policy = RetryPolicy.from_properties(current.metadata.properties)
    started = time.monotonic()
    written: dict[str, None] = {}
    tries = 0
    while True:
        tries += 1
        try:
            if current is not first:
                check_same_table(first, current)
            pending = attempt(current)
        except BaseException:
            # nothing of this attempt was swapped in, and earlier attempts lost their race
            _cleanup(written, cleanup_on_failure)
            raise
        written.update(dict.fromkeys(pending.written))
        try:
            committed = catalog.commit_table(current, pending.metadata)
        except CommitConflictError as e:
            elapsed_ms = (time.monotonic() - started) * 1000
            if tries > policy.num_retries or elapsed_ms >= policy.total_timeout_ms:
                _cleanup(written, cleanup_on_failure)
                raise CommitConflictError(
                    f"cannot commit to table '{identifier}': it kept changing under the commit "
                    f"({tries} attempt{'s' if tries > 1 else ''}; last conflict: {e})"
                ) from e
            sleep(policy.wait_ms(tries) / 1000)
            try:
                current = catalog.load_table(identifier)
            except BaseException:
                _cleanup(written, cleanup_on_failure)
                raise
            continue
        except BaseException as e:
            if certainly_not_committed(e):
                _cleanup(written, cleanup_on_failure)
            raise
        kept = set(pending.written)
        for location in written:
            if location not in kept:
                delete_quietly(location)
        return committed


def create(
    catalog: Catalog,
    identifier: TableIdentifier,
    metadata: TableMetadata,
    *,
    cleanup_on_failure: Sequence[str] = (),
) -> LoadedTable:
    """Register a new table whose first snapshot references ``cleanup_on_failure`` (CREATE
    TABLE ... AS SELECT); those files are deleted only when the create certainly did not
    land, as in :func:`commit`."""
    try:
        return catalog.create_table(identifier, metadata)
    except BaseException as e:
        if certainly_not_committed(e):
            _cleanup({}, cleanup_on_failure)
        raise


def check_same_table(first: LoadedTable, current: LoadedTable) -> None:
    """Refuse to retry a commit on a table that is not the one the statement started on.

    The UUID is compared as in Java's ``BaseMetastoreTableOperations.refreshFromMetadataLocation``
    ("Table UUID does not match: current=%s != refreshed=%s"), skipped when either side has
    none (v1 metadata may lack ``table-uuid``; the first commit assigns one). The location
    and the format version decide where the statement's files were written and which kinds
    of files it wrote, so a change of either also ends the retries.
    """
    old, new = first.metadata, current.metadata
    table = first.identifier
    if old.table_uuid is not None and new.table_uuid is not None and old.table_uuid != new.table_uuid:
        raise CommitConflictError(
            f"table '{table}' was dropped and re-created, or replaced by another table, while the "
            f"statement ran (Table UUID does not match: current={old.table_uuid} != "
            f"refreshed={new.table_uuid}); nothing was committed"
        )
    if old.location != new.location:
        raise CommitConflictError(
            f"table '{table}' moved from {old.location} to {new.location} while the statement ran; "
            "nothing was committed"
        )
    if old.format_version != new.format_version:
        raise CommitConflictError(
            f"table '{table}' was upgraded from format version {old.format_version} to "
            f"{new.format_version} while the statement ran; nothing was committed, run it again"
        )


def _cleanup(written: dict[str, None], extra: Sequence[str]) -> None:
    for location in [*written, *extra]:
        delete_quietly(location)

"""Re-validating a transaction's statements when COMMIT finds the table moved on.

A statement inside a transaction builds its snapshot on the transaction's pending state,
so its ``validate_from_snapshot_id`` may be one of the transaction's own snapshots. When
COMMIT finds that another writer committed meanwhile, the statements are run again, in
order, on the fresh table (Java's ``BaseTransaction.commitTransaction`` re-applies its
pending updates the same way); their re-run snapshots get new ids, so the snapshot a
later statement read is no longer in the branch's history. What that statement must be
checked against is what it did not see: the commits of *other* writers since the
transaction first read the table -- not the transaction's own earlier statements, whose
effects it saw (read-your-writes).

:class:`Replay` says so while the statements re-run: a starting snapshot of the
transaction's own maps to the snapshot the transaction started from (its ``origin``), and
the re-run snapshots are left out of the concurrent ones. :func:`concurrent_snapshots` is
what :mod:`iceduck.txn.snapshot` asks, inside a replay or not.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from iceduck.spec.snapshot import Snapshot
from iceduck.spec.table_metadata import TableMetadata
from iceduck.txn.validation import snapshots_since


@dataclass
class Replay:
    #: a snapshot the transaction made -> the committed snapshot its branch started from
    #: (None: the branch was empty)
    origin: dict[int, int | None]
    #: the snapshots the re-run statements made so far
    replayed: set[int] = field(default_factory=set)


#: the replay in progress in this thread (None: statements validate as single statements)
REPLAYING: ContextVar[Replay | None] = ContextVar("iceduck_replaying", default=None)


def origins(pending: TableMetadata, base: TableMetadata) -> dict[int, int | None]:
    """Each snapshot in ``pending`` but not in ``base`` -> its first ancestor in ``base``
    (the committed snapshot its branch started from; None when it started empty)."""
    committed = {s.snapshot_id for s in base.snapshots}
    own = {s.snapshot_id: s for s in pending.snapshots if s.snapshot_id not in committed}
    out: dict[int, int | None] = {}
    for snapshot_id, snapshot in own.items():
        parent = snapshot.parent_snapshot_id
        while parent is not None and parent in own:
            parent = own[parent].parent_snapshot_id
        out[snapshot_id] = parent
    return out


def concurrent_snapshots(
    metadata: TableMetadata, head: Snapshot | None, since_id: int | None
) -> list[Snapshot]:
    """The snapshots a change that read snapshot ``since_id`` did not see, newest first:
    :func:`~iceduck.txn.validation.snapshots_since`, seen through a replay in progress."""
    replay = REPLAYING.get()
    if replay is None or since_id not in replay.origin:
        return snapshots_since(metadata, head, since_id)
    since = replay.origin[since_id]
    return [s for s in snapshots_since(metadata, head, since) if s.snapshot_id not in replay.replayed]

"""Whether a catalog swap landed, when the call that made it did not return normally.

A commit ends in one atomic step -- the catalog's compare-and-swap of the metadata
location (spec, "Metastore Tables") -- and everything the commit wrote (the metadata file,
manifests, manifest list, data and delete files) is referenced by the table from the
instant that step lands. So files may be deleted after a failure only when the swap
*certainly* did not happen. An exception raised by the swap statement itself, or a
``KeyboardInterrupt`` or ``SystemExit`` from a signal handler arriving just after it,
says nothing about that: the statement may have run to the end before the exception was
delivered.

Iceberg Java answers the same question in ``BaseMetastoreTableOperations.checkCommitStatus``:
after an unexpected failure it reloads the table and looks for the new metadata file as
the current one or in the ``metadata-log``; when it cannot tell, it throws
``CommitStateUnknownException`` and deletes nothing. :func:`swap_outcome` is that check,
and :func:`settle_failed_swap` applies its answer: delete the new metadata file only on
:attr:`Outcome.NOT_LANDED`, and turn an unknown outcome into
:class:`~iceduck.errors.CommitStateUnknownError` with every file kept.

Callers further up (:mod:`iceduck.txn.commit`) then clean up their own files only after
an error that certifies nothing landed (:func:`certainly_not_committed`): an iceduck error
other than :class:`~iceduck.errors.CommitStateUnknownError`. Interrupts never certify it,
so an interrupted commit never deletes a file the table may reference; at worst it leaves
unreferenced files behind, which orphan-file removal reclaims.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from iceduck.catalog.metadata_files import delete_quietly
from iceduck.errors import CommitStateUnknownError, IceduckError
from iceduck.spec.table_metadata import TableMetadata


class Outcome(enum.Enum):
    LANDED = "landed"
    NOT_LANDED = "not landed"
    UNKNOWN = "unknown"


def swap_outcome(
    current: Callable[[], str | None],
    new_location: str,
    base_location: str | None,
    load: Callable[[str], TableMetadata],
) -> Outcome:
    """Where the catalog stands after a swap from ``base_location`` to ``new_location``
    raised: ``current()`` reads the catalog's metadata location now (None when the table
    is gone), ``load`` reads a metadata file.

    * the current location is the new file: landed;
    * it is still the base (None for a create: no row): nothing changed, so not landed --
      the new file's name is unique (it carries a fresh UUID), so no other writer can have
      swapped it in and back out;
    * it is a third file: another writer committed after us or instead of us; ours landed
      exactly when that file's ``metadata-log`` lists ours (Java's ``checkCommitStatus``);
    * any failure while looking, or a table that disappeared: unknown.
    """
    try:
        location = current()
        if location == new_location:
            return Outcome.LANDED
        if location == base_location:
            return Outcome.NOT_LANDED
        if location is None:
            return Outcome.UNKNOWN
        logged = {entry.metadata_file for entry in load(location).metadata_log}
        return Outcome.LANDED if new_location in logged else Outcome.UNKNOWN
    except Exception:
        return Outcome.UNKNOWN


def certainly_not_committed(error: BaseException) -> bool:
    """Whether ``error``, raised by a catalog create or commit, proves that nothing was
    swapped in, so the files written for that commit may be deleted.

    The catalog contract (:class:`~iceduck.catalog.base.Catalog`): an
    :class:`~iceduck.errors.IceduckError` from ``create_table``/``commit_table`` other than
    :class:`~iceduck.errors.CommitStateUnknownError` means the catalog is unchanged. Any
    other exception -- an interrupt, an unexpected bug -- proves nothing.
    """
    return isinstance(error, IceduckError) and not isinstance(error, CommitStateUnknownError)


def settle_failed_swap(
    error: BaseException,
    outcome: Outcome,
    new_location: str,
    table: str,
) -> bool:
    """Act on a swap that raised ``error``: True when it landed after all (the caller then
    finishes as a success, unless ``error`` is an interrupt, which it re-raises with every
    file kept); otherwise this raises.

    * not landed: the new metadata file is deleted and ``error`` propagates;
    * unknown: nothing is deleted; an interrupt propagates as it is, any other error
      becomes :class:`CommitStateUnknownError` naming the table and the file.
    """
    if outcome is Outcome.NOT_LANDED:
        delete_quietly(new_location)
        raise error
    if outcome is Outcome.LANDED:
        if not isinstance(error, Exception):
            raise error  # KeyboardInterrupt/SystemExit after the swap: stop, keep every file
        return True
    if not isinstance(error, Exception):
        raise error
    raise CommitStateUnknownError(
        f"the commit to table '{table}' may or may not have landed ({error}); no file was deleted. "
        f"Look at the table (SELECT * FROM {table}.snapshots) before running the statement again; "
        f"the new metadata file was {new_location}"
    ) from error

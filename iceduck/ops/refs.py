"""Branches and tags: ALTER TABLE ... CREATE [OR REPLACE] / REPLACE / DROP BRANCH|TAG.

Spark 3.5 + Iceberg 1.10 semantics (Java's ``SnapshotManager`` under Iceberg's Spark
extensions, probed with Spark; tests/ops/test_refs.py, tests/interop/test_ops_ddl_spark.py), with
Java's messages:

* CREATE on a name that exists: "Ref b already exists"; with IF NOT EXISTS nothing at all
  changes (not even the retention); REPLACE of a missing one: "Branch does not exist: b";
  CREATE OR REPLACE creates or moves it.
* Replacing keeps the ref's retention settings unless the statement gives new ones.
* A branch or tag name belongs to one kind: replacing or dropping with the other kind is
  refused ("Ref b is a branch not a tag"); ``main`` cannot be dropped.
* On a table without snapshots, CREATE BRANCH commits an empty ``append`` snapshot for the
  branch (Java's ``createBranch(name)``); CREATE TAG is refused ("main has no snapshot").
* ``AS OF VERSION n`` must name a known snapshot; ``AS OF VERSION 'ref'`` takes that
  ref's snapshot. Tags keep only ``RETAIN`` (``max-ref-age-ms``).

The statement's snapshot is chosen once, when it starts (as Java does); a retry after a
concurrent commit re-checks existence on the refreshed table.
"""

from __future__ import annotations

from iceduck.catalog.base import LoadedTable
from iceduck.errors import AlreadyExistsError, NotFoundError, UserError, ValidationError
from iceduck.ops.context import OpContext, OpResult
from iceduck.spec.snapshot import MAIN_BRANCH, Operation, RefType, SnapshotRef
from iceduck.spec.table_metadata import TableMetadata
from iceduck.sql.statements import CreateRef, DropRef, RefKind
from iceduck.txn.builder import MetadataBuilder
from iceduck.txn.commit import PendingCommit, commit
from iceduck.txn.snapshot import SnapshotChanges, produce

_KINDS = {RefKind.BRANCH: RefType.BRANCH, RefKind.TAG: RefType.TAG}


def create_ref(ctx: OpContext, stmt: CreateRef) -> OpResult:
    loaded = _table(ctx, stmt.table)
    kind = _KINDS[stmt.kind]
    word = stmt.kind.value
    _check_retention(stmt)
    existing = loaded.metadata.refs.get(stmt.ref_name)
    if existing is not None and stmt.if_not_exists and not (stmt.or_replace or stmt.replace):
        return OpResult(message=f"{word} {stmt.ref_name} already exists")
    snapshot_id = _snapshot_id(loaded.metadata, stmt)

    def attempt(base: LoadedTable) -> PendingCommit:
        metadata = base.metadata
        old = metadata.refs.get(stmt.ref_name)
        _check_kind_and_existence(stmt, old, kind)
        if snapshot_id is None:  # an empty table: a branch gets an empty snapshot of its own
            changes = SnapshotChanges(Operation.APPEND)
            pending = produce(
                metadata, changes, branch=stmt.ref_name, table_location=metadata.location, cache=ctx.manifests
            )
            ref = _ref(pending.metadata.refs[stmt.ref_name].snapshot_id, kind, stmt, None)
            builder = MetadataBuilder(pending.metadata)
            builder.set_ref(stmt.ref_name, ref)
            return PendingCommit(builder.build(), pending.written)
        builder = MetadataBuilder(metadata)
        builder.set_ref(stmt.ref_name, _ref(snapshot_id, kind, stmt, old))
        return PendingCommit(builder.build(), [])

    commit(ctx.catalog, loaded.identifier, attempt, base=loaded)
    done = "replaced" if existing is not None else "created"
    return OpResult(message=f"{done} {word} {stmt.ref_name} of table {loaded.identifier}")


def drop_ref(ctx: OpContext, stmt: DropRef) -> OpResult:
    loaded = _table(ctx, stmt.table)
    kind = _KINDS[stmt.kind]
    word = stmt.kind.value
    if stmt.ref_name == MAIN_BRANCH:
        raise ValidationError("cannot remove the main branch")
    if stmt.ref_name not in loaded.metadata.refs and stmt.if_exists:
        return OpResult(message=f"{word} {stmt.ref_name} does not exist")

    def attempt(base: LoadedTable) -> PendingCommit:
        old = base.metadata.refs.get(stmt.ref_name)
        if old is None:
            raise NotFoundError(f"{word.capitalize()} does not exist: {stmt.ref_name}")
        if old.type is not kind:
            raise ValidationError(f"Ref {stmt.ref_name} is a {old.type.value} not a {word}")
        builder = MetadataBuilder(base.metadata)
        builder.remove_ref(stmt.ref_name)
        return PendingCommit(builder.build(), [])

    commit(ctx.catalog, loaded.identifier, attempt, base=loaded)
    return OpResult(message=f"dropped {word} {stmt.ref_name} of table {loaded.identifier}")


def _table(ctx: OpContext, name: tuple[str, ...]) -> LoadedTable:
    target = ctx.resolve_target(name)
    if target.branch != MAIN_BRANCH:
        raise UserError(f"name the table, not branch {target.branch!r}: ALTER TABLE {target.identifier} ...")
    return target.table


def _check_retention(stmt: CreateRef) -> None:
    if stmt.kind is RefKind.TAG and (
        stmt.min_snapshots_to_keep is not None or stmt.max_snapshot_age_ms is not None
    ):
        raise ValidationError("tags do not support snapshot retention: use RETAIN n DAYS for a tag")
    for name, value in (
        ("RETAIN", stmt.max_ref_age_ms),
        ("SNAPSHOT RETENTION", stmt.max_snapshot_age_ms),
        ("SNAPSHOTS", stmt.min_snapshots_to_keep),
    ):
        if value is not None and value <= 0:
            raise ValidationError(f"{name} must be positive, not {value}")


def _snapshot_id(metadata: TableMetadata, stmt: CreateRef) -> int | None:
    """The snapshot the ref will point at; None only for a branch of a table without one."""
    if stmt.from_ref is not None:
        ref = metadata.refs.get(stmt.from_ref)
        if ref is None:
            if stmt.from_ref == MAIN_BRANCH:
                raise ValidationError(
                    f"cannot create {stmt.kind.value} {stmt.ref_name} as of main: main has no snapshot"
                )
            raise NotFoundError(f"table has no branch or tag named {stmt.from_ref!r}")
        return ref.snapshot_id
    if stmt.snapshot_id is not None:
        if not any(s.snapshot_id == stmt.snapshot_id for s in metadata.snapshots):
            raise NotFoundError(f"Cannot set {stmt.ref_name} to unknown snapshot: {stmt.snapshot_id}")
        return stmt.snapshot_id
    if metadata.current_snapshot_id is not None:
        return metadata.current_snapshot_id
    if stmt.kind is RefKind.TAG or stmt.replace or stmt.or_replace:
        raise ValidationError(
            f"cannot create or replace {stmt.kind.value} {stmt.ref_name}: main has no snapshot"
        )
    return None


def _check_kind_and_existence(stmt: CreateRef, old: SnapshotRef | None, kind: RefType) -> None:
    word = stmt.kind.value
    if old is None:
        if stmt.replace:
            raise NotFoundError(f"{word.capitalize()} does not exist: {stmt.ref_name}")
        return
    if not (stmt.replace or stmt.or_replace):
        raise AlreadyExistsError(f"Ref {stmt.ref_name} already exists")
    if old.type is not kind:
        raise ValidationError(f"Ref {stmt.ref_name} is a {old.type.value} not a {word}")


def _ref(snapshot_id: int, kind: RefType, stmt: CreateRef, old: SnapshotRef | None) -> SnapshotRef:
    """The new ref: the statement's retention where given, else the replaced ref's."""

    def pick(new: int | None, before: int | None) -> int | None:
        return new if new is not None else before

    if kind is RefType.TAG:
        return SnapshotRef(
            snapshot_id, kind, max_ref_age_ms=pick(stmt.max_ref_age_ms, old.max_ref_age_ms if old else None)
        )
    return SnapshotRef(
        snapshot_id,
        kind,
        min_snapshots_to_keep=pick(stmt.min_snapshots_to_keep, old.min_snapshots_to_keep if old else None),
        max_snapshot_age_ms=pick(stmt.max_snapshot_age_ms, old.max_snapshot_age_ms if old else None),
        max_ref_age_ms=pick(stmt.max_ref_age_ms, old.max_ref_age_ms if old else None),
    )

"""Which snapshot a scan reads, and with which schema (time travel and refs).

Semantics are Spark 3.5 + Iceberg 1.10's, so a query means the same thing in both:

* no selector, or the ``main`` branch: the table's current snapshot (``None`` for a table
  never written: the scan is empty);
* ``snapshot_id``: that snapshot;
* ``ref``: a branch's head or a tag's snapshot (an unknown name is an error);
* ``timestamp_ms``: Java's ``SnapshotUtil.snapshotIdAsOfTime``: the *last* entry of the
  snapshot log (the history of ``main``'s current snapshot) whose timestamp is ``<=``
  the time. Spec, Appendix F: "implementations should use "snapshot-log" metadata to
  lookup the table state at the given point in time [...] If no snapshot exists prior to
  the timestamp given or "snapshot-log" is not populated [...] systems should raise an
  informative error message about the missing metadata";
* ``version`` (``VERSION AS OF``): Spark's ``SparkCatalog.loadTable(ident, version)``
  first parses the version as a snapshot id (so a numeric string *is* a snapshot id,
  even if a ref has that name), and otherwise looks it up as a branch or tag name.

The schema rows are read with is Java's ``SnapshotUtil.schemaFor``: a snapshot chosen by
id, tag or timestamp is read with the schema it was written with (its ``schema-id``; the
current schema when the snapshot predates schema ids); a branch (``main`` included) is
read with the table's *current* schema, because that is the schema a write to the branch
would use ("If the ref does not exist or the ref is a branch, the table schema is
returned").
"""

from __future__ import annotations

from dataclasses import dataclass

from iceduck.errors import NotFoundError, UserError
from iceduck.spec.datetimes import micros_to_iso_timestamp
from iceduck.spec.schema import Schema
from iceduck.spec.snapshot import MAIN_BRANCH, RefType, Snapshot
from iceduck.spec.table_metadata import TableMetadata


@dataclass(frozen=True)
class ScanTarget:
    """What a scan reads: the snapshot (None: empty table), the schema, and the branch if any."""

    snapshot: Snapshot | None
    schema: Schema
    #: the branch being read (``main`` for plain reads); None for snapshot/tag/timestamp reads
    branch: str | None = MAIN_BRANCH

    @property
    def snapshot_id(self) -> int | None:
        return None if self.snapshot is None else self.snapshot.snapshot_id


def _subject(table: str | None) -> str:
    return f"table {table}" if table else "the table"


def _format_ms(timestamp_ms: int) -> str:
    """``2020-01-01 00:00:00`` (UTC), with milliseconds only when they are not zero."""
    text = micros_to_iso_timestamp(timestamp_ms * 1000).replace("T", " ")
    head, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    if fraction:
        return f"{head}.{fraction.ljust(3, '0')}"
    return head


def snapshot_by_id(metadata: TableMetadata, snapshot_id: int, table: str | None = None) -> Snapshot:
    found = metadata.find_snapshot(snapshot_id)
    if found is not None:
        return found
    raise NotFoundError(f"{_subject(table)} has no snapshot with id {snapshot_id}")


def snapshot_id_as_of(metadata: TableMetadata, timestamp_ms: int, table: str | None = None) -> int:
    """Java ``SnapshotUtil.snapshotIdAsOfTime``: the last snapshot-log entry at or before the time."""
    found: int | None = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms <= timestamp_ms:
            found = entry.snapshot_id
    if found is None:
        when = _format_ms(timestamp_ms)
        if not metadata.snapshot_log:
            raise NotFoundError(
                f"no snapshot of {_subject(table)} at or before {when} UTC: "
                "its metadata has no snapshot log to time-travel with"
            )
        oldest = _format_ms(min(e.timestamp_ms for e in metadata.snapshot_log))
        raise NotFoundError(
            f"no snapshot of {_subject(table)} at or before {when} UTC "
            f"(its oldest snapshot is from {oldest} UTC)"
        )
    return found


def _ref_target(metadata: TableMetadata, name: str, table: str | None, expect: RefType | None) -> ScanTarget:
    ref = metadata.refs.get(name)
    if ref is None and name == MAIN_BRANCH:
        if expect is RefType.TAG:
            raise NotFoundError(f"{_subject(table)} has no tag named {name!r}")
        return ScanTarget(metadata.current_snapshot(), metadata.schema(), MAIN_BRANCH)
    if ref is None:
        kind = {RefType.BRANCH: "branch", RefType.TAG: "tag", None: "branch or tag"}[expect]
        raise NotFoundError(f"{_subject(table)} has no {kind} named {name!r}")
    if expect is not None and ref.type is not expect:
        raise NotFoundError(f"{name!r} of {_subject(table)} is a {ref.type.value}, not a {expect.value}")
    snapshot = snapshot_by_id(metadata, ref.snapshot_id, table)
    if ref.is_branch:
        return ScanTarget(snapshot, metadata.schema(), name)
    return ScanTarget(snapshot, schema_of_snapshot(metadata, snapshot), None)


def schema_of_snapshot(metadata: TableMetadata, snapshot: Snapshot) -> Schema:
    """The schema a snapshot was written with; the current one if it does not say."""
    if snapshot.schema_id is None:
        return metadata.schema()
    for s in metadata.schemas:
        if s.schema_id == snapshot.schema_id:
            return s
    raise NotFoundError(
        f"snapshot {snapshot.snapshot_id} was written with schema {snapshot.schema_id}, "
        "which the table metadata no longer has"
    )


def _parse_version(version: int | str) -> int | None:
    """Spark parses ``VERSION AS OF`` text with ``Long.parseLong`` before trying ref names."""
    if isinstance(version, bool):
        raise UserError(f"invalid VERSION AS OF value {version!r}")
    if isinstance(version, int):
        return version
    text = version
    digits = text[1:] if text[:1] in "+-" else text
    if digits and digits.isascii() and digits.isdigit():
        value = int(text)
        if -(2**63) <= value < 2**63:
            return value
    return None


def resolve(
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    timestamp_ms: int | None = None,
    version: int | str | None = None,
    expect: RefType | None = None,
    table: str | None = None,
) -> ScanTarget:
    """The snapshot and schema of a scan; give at most one selector.

    ``expect`` restricts ``ref`` to a branch or a tag (Spark's ``t.branch_<name>`` and
    ``t.tag_<name>`` forms); ``table`` names the table in error messages.
    """
    given = [
        name
        for name, value in (
            ("snapshot id", snapshot_id),
            ("ref", ref),
            ("timestamp", timestamp_ms),
            ("version", version),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise UserError(f"cannot time-travel by both {given[0]} and {given[1]}")
    if version is not None:
        parsed = _parse_version(version)
        if parsed is None:
            name = str(version)
            if name not in metadata.refs and name != MAIN_BRANCH:
                raise NotFoundError(
                    f"{_subject(table)} has no snapshot id or branch or tag matching version {name!r}"
                )
            return _ref_target(metadata, name, table, None)
        snapshot_id = parsed
    if snapshot_id is not None:
        snapshot = snapshot_by_id(metadata, snapshot_id, table)
        return ScanTarget(snapshot, schema_of_snapshot(metadata, snapshot), None)
    if timestamp_ms is not None:
        snapshot = snapshot_by_id(metadata, snapshot_id_as_of(metadata, timestamp_ms, table), table)
        return ScanTarget(snapshot, schema_of_snapshot(metadata, snapshot), None)
    return _ref_target(metadata, ref if ref is not None else MAIN_BRANCH, table, expect)


def resolve_snapshot(
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    timestamp_ms: int | None = None,
    version: int | str | None = None,
) -> Snapshot | None:
    """The snapshot of :func:`resolve` (None for a table that was never written)."""
    return resolve(
        metadata, snapshot_id=snapshot_id, ref=ref, timestamp_ms=timestamp_ms, version=version
    ).snapshot

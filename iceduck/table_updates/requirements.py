"""Table requirements of a REST commit: assertions about the metadata a change was based on.

The REST spec's ``TableRequirement`` objects are told apart by their ``type``; a
server checks every one against the table's current metadata before applying the updates,
and a commit whose requirements fail is refused with 409 ``CommitFailedException``, so a
failed requirement is a :class:`CommitConflictError` whose message follows Java's
``UpdateRequirement.validate`` ("Requirement failed: ...").

This module knows no HTTP: it takes and returns plain objects and parsed JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from iceduck.errors import CommitConflictError, NotFoundError, ValidationError
from iceduck.formats.schema_json import get_int, get_long, get_str
from iceduck.spec.table_metadata import TableMetadata
from iceduck.table_updates.change_json import bad_request, discriminator


@dataclass(frozen=True)
class AssertCreate:
    """ "The table must not already exist; used for create transactions"."""


@dataclass(frozen=True)
class AssertTableUUID:
    """ "The table UUID must match the requirement's ``uuid``"."""

    uuid: str


@dataclass(frozen=True)
class AssertRefSnapshotId:
    """ "The table branch or tag identified by the requirement's ``ref`` must reference the
    requirement's ``snapshot-id``; if ``snapshot-id`` is ``null`` or missing, the ref must
    not already exist"."""

    ref: str
    snapshot_id: int | None


@dataclass(frozen=True)
class AssertLastAssignedFieldId:
    """ "The table's last assigned column id must match the requirement's
    ``last-assigned-field-id``"."""

    last_assigned_field_id: int


@dataclass(frozen=True)
class AssertCurrentSchemaId:
    """ "The table's current schema id must match the requirement's ``current-schema-id``"."""

    current_schema_id: int


@dataclass(frozen=True)
class AssertLastAssignedPartitionId:
    """ "The table's last assigned partition id must match the requirement's
    ``last-assigned-partition-id``"."""

    last_assigned_partition_id: int


@dataclass(frozen=True)
class AssertDefaultSpecId:
    """ "The table's default spec id must match the requirement's ``default-spec-id``"."""

    default_spec_id: int


@dataclass(frozen=True)
class AssertDefaultSortOrderId:
    """ "The table's default sort order id must match the requirement's
    ``default-sort-order-id``"."""

    default_sort_order_id: int


Requirement = (
    AssertCreate
    | AssertTableUUID
    | AssertRefSnapshotId
    | AssertLastAssignedFieldId
    | AssertCurrentSchemaId
    | AssertLastAssignedPartitionId
    | AssertDefaultSpecId
    | AssertDefaultSortOrderId
)

# -- JSON -------------------------------------------------------------------------------------

#: type name -> (class, its one JSON field); the attribute is the field's name in snake case
_SINGLE_FIELD: dict[str, tuple[type, str]] = {
    "assert-table-uuid": (AssertTableUUID, "uuid"),
    "assert-last-assigned-field-id": (AssertLastAssignedFieldId, "last-assigned-field-id"),
    "assert-current-schema-id": (AssertCurrentSchemaId, "current-schema-id"),
    "assert-last-assigned-partition-id": (AssertLastAssignedPartitionId, "last-assigned-partition-id"),
    "assert-default-spec-id": (AssertDefaultSpecId, "default-spec-id"),
    "assert-default-sort-order-id": (AssertDefaultSortOrderId, "default-sort-order-id"),
}


def _attribute(json_field: str) -> str:
    return json_field.replace("-", "_")


_TYPE_NAMES: dict[type, str] = {cls: name for name, (cls, _key) in _SINGLE_FIELD.items()}
_TYPE_NAMES[AssertCreate] = "assert-create"
_TYPE_NAMES[AssertRefSnapshotId] = "assert-ref-snapshot-id"


def parse_requirement(obj: Any) -> Requirement:
    """A requirement from its JSON object; a :class:`ValidationError` (a bad request) names
    an unknown ``type`` or a missing or ill-typed field."""
    obj, kind = discriminator(obj, "type", "requirement")
    where = f"requirement {kind!r}"
    with bad_request():
        if kind == "assert-create":
            return AssertCreate()
        if kind == "assert-ref-snapshot-id":
            return AssertRefSnapshotId(
                get_str(obj, "ref", where), get_long(obj, "snapshot-id", where, required=False)
            )
        if kind in _SINGLE_FIELD:
            cls, key = _SINGLE_FIELD[kind]
            value: Any = get_str(obj, key, where) if key == "uuid" else get_int(obj, key, where)
            result: Requirement = cls(value)
            return result
    raise ValidationError(f"unknown requirement type {kind!r}")


def parse_requirements(obj: Any) -> list[Requirement]:
    """The ``requirements`` array of a commit request; an error names the bad element's index."""
    if not isinstance(obj, list):
        raise ValidationError(f"requirements must be a JSON array, got {type(obj).__name__}")
    out = []
    for i, item in enumerate(obj):
        try:
            out.append(parse_requirement(item))
        except ValidationError as e:
            raise ValidationError(f"requirements[{i}]: {e}") from e
    return out


def requirement_json(req: Requirement) -> dict[str, Any]:
    """The JSON object of ``req``, in the REST spec's shape."""
    out: dict[str, Any] = {"type": _TYPE_NAMES[type(req)]}
    if isinstance(req, AssertRefSnapshotId):
        out["ref"] = req.ref
        out["snapshot-id"] = req.snapshot_id
    elif not isinstance(req, AssertCreate):
        _cls, key = _SINGLE_FIELD[out["type"]]
        out[key] = getattr(req, _attribute(key))
    return out


# -- checking ---------------------------------------------------------------------------------


def check_requirements(base: TableMetadata | None, requirements: Iterable[Requirement]) -> None:
    """Check every requirement against ``base`` (None: the table does not exist).

    A failed one is a :class:`CommitConflictError` (409). Any requirement but
    ``assert-create`` needs the table: on a missing one it is a :class:`NotFoundError`
    (404 ``NoSuchTableException``, as Java's ``CatalogHandlers`` loads the table first).
    """
    for req in requirements:
        _check(base, req)


def _check(base: TableMetadata | None, req: Requirement) -> None:
    if isinstance(req, AssertCreate):
        if base is not None:
            raise CommitConflictError("Requirement failed: table already exists")
        return
    if base is None:
        raise NotFoundError(f"Requirement failed: table does not exist ({_TYPE_NAMES[type(req)]})")
    if isinstance(req, AssertTableUUID):
        if req.uuid != base.table_uuid:
            raise CommitConflictError(
                f"Requirement failed: UUID does not match: expected {base.table_uuid} != {req.uuid}"
            )
    elif isinstance(req, AssertRefSnapshotId):
        _check_ref(base, req)
    else:
        _cls, key = _SINGLE_FIELD[_TYPE_NAMES[type(req)]]
        actual = getattr(base, _BASE_ATTR[type(req)])
        expected = getattr(req, _attribute(key))
        if actual != expected:
            raise CommitConflictError(
                f"Requirement failed: {_WHAT[type(req)]} changed: expected id {expected} != {actual}"
            )


#: the metadata attribute each id requirement compares, and how Java's message names it
_BASE_ATTR: dict[type, str] = {
    AssertLastAssignedFieldId: "last_column_id",
    AssertCurrentSchemaId: "current_schema_id",
    AssertLastAssignedPartitionId: "last_partition_id",
    AssertDefaultSpecId: "default_spec_id",
    AssertDefaultSortOrderId: "default_sort_order_id",
}
_WHAT: dict[type, str] = {
    AssertLastAssignedFieldId: "last assigned field id",
    AssertCurrentSchemaId: "current schema",
    AssertLastAssignedPartitionId: "last assigned partition id",
    AssertDefaultSpecId: "default partition spec",
    AssertDefaultSortOrderId: "default sort order",
}


def _check_ref(base: TableMetadata, req: AssertRefSnapshotId) -> None:
    ref = base.refs.get(req.ref)
    if ref is None:
        if req.snapshot_id is not None:
            raise CommitConflictError(
                f"Requirement failed: branch or tag {req.ref} is missing, expected {req.snapshot_id}"
            )
        return
    kind = "branch" if ref.is_branch else "tag"
    if req.snapshot_id is None:
        raise CommitConflictError(f"Requirement failed: {kind} {req.ref} was created concurrently")
    if req.snapshot_id != ref.snapshot_id:
        raise CommitConflictError(
            f"Requirement failed: {kind} {req.ref} has changed: "
            f"expected id {req.snapshot_id} != {ref.snapshot_id}"
        )

"""View updates of a REST commit (``CommitViewRequest``): typed, to and from JSON, and the
updates that turn one view metadata into another.

The REST spec's ``CommitViewRequest`` carries ``requirements`` (only ``assert-view-uuid``:
``ViewRequirement``) and ``updates`` (``ViewUpdate``): ``assign-uuid``,
``upgrade-format-version``, ``add-schema``, ``set-location``, ``set-properties``,
``remove-properties``, ``add-view-version`` and ``set-current-view-version``
("view-version-id": "The view version id to set as current, or -1 to set last added view
version id"). The first six are the table updates of the same names
(:mod:`iceduck.table_updates.updates`); the last two are the view's own. The server applies
them with :func:`iceduck.table_updates.view_apply.apply_view_updates`.

:func:`view_changes` is the client's half: the updates Java's ``ViewMetadata.Builder``
records for the same change (``metadata.changes()``, which Java's ``RESTViewOperations``
sends), so the server rebuilds the metadata the client built; a schema or version added in
the change is named by ``-1`` ("last added") so that a server re-applying the change on a
newer view assigns the ids itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from iceduck.errors import CommitConflictError, ValidationError
from iceduck.formats.schema_json import get_int, get_str
from iceduck.formats.view_metadata_json import view_version_from_json, view_version_json
from iceduck.spec.view_metadata import ViewMetadata, ViewVersion
from iceduck.table_updates.change_json import bad_request, discriminator
from iceduck.table_updates.updates import (
    LAST_ADDED,
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    UpgradeFormatVersion,
    parse_update,
    update_json,
)


@dataclass(frozen=True)
class AddViewVersion:
    """``add-view-version``: a version whose ``schema-id`` may be -1 (the last added schema)."""

    version: ViewVersion


@dataclass(frozen=True)
class SetCurrentViewVersion:
    """``set-current-view-version``: a version id, or -1 for the last added version."""

    version_id: int


@dataclass(frozen=True)
class AssertViewUUID:
    """``assert-view-uuid``: "The view UUID must match the requirement's ``uuid``"."""

    uuid: str


ViewUpdate = (
    AssignUUID
    | UpgradeFormatVersion
    | AddSchema
    | SetLocation
    | SetProperties
    | RemoveProperties
    | AddViewVersion
    | SetCurrentViewVersion
)

#: the table updates a view commit may carry too
_SHARED = frozenset(
    {
        "assign-uuid",
        "upgrade-format-version",
        "add-schema",
        "set-location",
        "set-properties",
        "remove-properties",
    }
)
_SHARED_TYPES = (AssignUUID, UpgradeFormatVersion, AddSchema, SetLocation, SetProperties, RemoveProperties)


# -- reading ------------------------------------------------------------------------------


def parse_view_update(obj: Any) -> ViewUpdate:
    """A view update from its JSON object; a :class:`ValidationError` (a bad request) names an
    action that is not a view update or a missing or ill-typed field."""
    obj, action = discriminator(obj, "action", "update")
    where = f"update {action!r}"
    if action == "add-view-version":
        with bad_request():
            return AddViewVersion(view_version_from_json(obj.get("view-version"), f"{where}.view-version"))
    if action == "set-current-view-version":
        with bad_request():
            return SetCurrentViewVersion(get_int(obj, "view-version-id", where))
    if action in _SHARED:
        update = parse_update(obj)
        if isinstance(update, _SHARED_TYPES):
            return update
    raise ValidationError(f"unknown view update action {action!r}")


def parse_view_updates(obj: Any) -> list[ViewUpdate]:
    """The ``updates`` array of a ``CommitViewRequest``; an error names the element's index."""
    if not isinstance(obj, list):
        raise ValidationError(f"updates must be a JSON array, got {type(obj).__name__}")
    out = []
    for i, item in enumerate(obj):
        try:
            out.append(parse_view_update(item))
        except ValidationError as e:
            raise ValidationError(f"updates[{i}]: {e}") from e
    return out


def parse_view_requirements(obj: Any) -> list[AssertViewUUID]:
    """The ``requirements`` array of a ``CommitViewRequest`` (absent: none)."""
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise ValidationError(f"requirements must be a JSON array, got {type(obj).__name__}")
    out = []
    for i, item in enumerate(obj):
        item, kind = discriminator(item, "type", f"requirements[{i}]")
        if kind != "assert-view-uuid":
            raise ValidationError(f"requirements[{i}]: unknown view requirement type {kind!r}")
        with bad_request():
            out.append(AssertViewUUID(get_str(item, "uuid", f"requirements[{i}]")))
    return out


def check_view_requirements(base: ViewMetadata, requirements: Iterable[AssertViewUUID]) -> None:
    """A :class:`CommitConflictError` (409) in Java's words when a requirement fails
    (``UpdateRequirement.AssertViewUUID``)."""
    for req in requirements:
        if req.uuid != base.view_uuid:
            raise CommitConflictError(
                f"Requirement failed: view UUID does not match: expected {base.view_uuid} != {req.uuid}"
            )


# -- writing ------------------------------------------------------------------------------


def view_update_json(update: ViewUpdate) -> dict[str, Any]:
    """The JSON object of ``update``, in the REST spec's shape."""
    if isinstance(update, AddViewVersion):
        return {"action": "add-view-version", "view-version": view_version_json(update.version)}
    if isinstance(update, SetCurrentViewVersion):
        return {"action": "set-current-view-version", "view-version-id": update.version_id}
    return update_json(update)


def view_requirement_json(req: AssertViewUUID) -> dict[str, Any]:
    return {"type": "assert-view-uuid", "uuid": req.uuid}


def view_changes(base: ViewMetadata, new: ViewMetadata) -> list[ViewUpdate]:
    """The updates that make ``new`` from ``base``, in the order Java's builder records them
    for a replace (schema, version, current version) or a property or location change."""
    updates: list[ViewUpdate] = []
    if new.format_version != base.format_version:
        updates.append(UpgradeFormatVersion(new.format_version))
    if new.location != base.location:
        updates.append(SetLocation(new.location))
    old_schemas = {s.schema_id for s in base.schemas}
    added_schemas = [s for s in new.schemas if s.schema_id not in old_schemas]
    updates.extend(AddSchema(s, s.highest_field_id) for s in added_schemas)
    last_schema = added_schemas[-1].schema_id if added_schemas else None
    old_versions = {v.version_id for v in base.versions}
    added_versions = [v for v in new.versions if v.version_id not in old_versions]
    for version in added_versions:
        if version.schema_id == last_schema:
            version = replace(version, schema_id=LAST_ADDED)
        updates.append(AddViewVersion(version))
    if new.current_version_id != base.current_version_id:
        last_version = added_versions[-1].version_id if added_versions else None
        current = LAST_ADDED if new.current_version_id == last_version else new.current_version_id
        updates.append(SetCurrentViewVersion(current))
    changed = {k: v for k, v in new.properties.items() if base.properties.get(k) != v}
    if changed:
        updates.append(SetProperties(changed))
    removed = tuple(sorted(k for k in base.properties if k not in new.properties))
    if removed:
        updates.append(RemoveProperties(removed))
    return updates

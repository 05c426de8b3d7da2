"""Applying a ``CommitViewRequest``'s updates to a view's metadata, as Java's server does.

Java's ``CatalogHandlers.commit`` for views replays each update on
``ViewMetadata.buildFrom(base)`` and commits only when the builder recorded a change
("do not commit if the metadata has not changed"). This is that builder's logic
(Iceberg 1.10 ``ViewMetadata.Builder``), so a server re-applying a client's change on a
newer view numbers schemas and versions as Java's would:

* ``add-schema`` reuses the id of an existing schema with the same fields, else takes the
  highest id + 1; only a schema actually added becomes "the last added schema";
* ``add-view-version`` reuses the id of an equal version (same summary, representations,
  default catalog and namespace, schema id), else takes the highest id + 1; ``schema-id``
  -1 is the last added schema ("Cannot set last added schema: no schema has been added");
  a version may hold one SQL representation per dialect;
* ``set-current-view-version`` -1 is the last version added by this change; the
  ``version-log`` entry takes the version's own timestamp when the version was added by
  this change, else the clock's;
* then :func:`~iceduck.spec.view_metadata.finish_view_change` (A's builder rules): the
  dialect-loss rule against the base's current version, and expiring old versions.

Errors are :class:`ValidationError` in Java's words (Java's ``IllegalArgumentException`` /
``ValidationException``: a 400).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from iceduck.errors import ValidationError
from iceduck.spec.schema import Schema
from iceduck.spec.view_metadata import (
    SQL_REPRESENTATION,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
    check_view_metadata,
    now_ms,
)
from iceduck.spec.view_metadata import _finish as finish_view_change
from iceduck.table_updates.updates import (
    LAST_ADDED,
    AddSchema,
    AssignUUID,
    RemoveProperties,
    SetLocation,
    SetProperties,
    UpgradeFormatVersion,
)
from iceduck.table_updates.view_updates import AddViewVersion, SetCurrentViewVersion, ViewUpdate


@dataclass
class _Builder:
    """The mutable state of Java's ``ViewMetadata.Builder`` started from a base."""

    md: ViewMetadata
    now: int
    changed: bool = False
    last_added_schema_id: int | None = None
    last_added_version_id: int | None = None
    history_entry: ViewHistoryEntry | None = None

    def __post_init__(self) -> None:
        self.added_versions: set[int] = set()

    def apply(self, update: ViewUpdate) -> None:
        if isinstance(update, AssignUUID):
            if update.uuid != self.md.view_uuid:
                raise ValidationError("Cannot reassign uuid")
        elif isinstance(update, UpgradeFormatVersion):
            self._upgrade(update.format_version)
        elif isinstance(update, AddSchema):
            self._add_schema(update.schema)
        elif isinstance(update, SetLocation):
            if update.location != self.md.location:
                self._set(location=update.location)
        elif isinstance(update, SetProperties):
            if update.updates:
                self._set(properties={**self.md.properties, **update.updates})
        elif isinstance(update, RemoveProperties):
            if update.removals:
                gone = set(update.removals)
                self._set(properties={k: v for k, v in self.md.properties.items() if k not in gone})
        elif isinstance(update, AddViewVersion):
            self._add_version(update.version)
        elif isinstance(update, SetCurrentViewVersion):
            self._set_current(update.version_id)

    def _set(self, **fields: object) -> None:
        self.md = replace(self.md, **fields)  # type: ignore[arg-type]
        self.changed = True

    def _upgrade(self, format_version: int) -> None:
        if format_version < self.md.format_version:
            raise ValidationError(f"Cannot downgrade v{self.md.format_version} view to v{format_version}")
        if format_version != self.md.format_version:
            self._set(format_version=format_version)

    def _add_schema(self, schema: Schema) -> int:
        new_id = 0
        for existing in self.md.schemas:
            if existing.fields == schema.fields and set(existing.identifier_field_ids) == set(
                schema.identifier_field_ids
            ):
                return existing.schema_id
            new_id = max(new_id, existing.schema_id + 1)
        self._set(schemas=(*self.md.schemas, replace(schema, schema_id=new_id)))
        self.last_added_schema_id = new_id
        return new_id

    def _add_version(self, version: ViewVersion) -> int:
        new_id = version.version_id
        for existing in self.md.versions:
            if _same_version(existing, version):
                new_id = existing.version_id
                break
            if existing.version_id >= new_id:
                new_id = existing.version_id + 1
        if any(v.version_id == new_id for v in self.md.versions):
            self.last_added_version_id = new_id if new_id in self.added_versions else None
            return new_id
        schema_id = version.schema_id
        if schema_id == LAST_ADDED:
            if self.last_added_schema_id is None:
                raise ValidationError("Cannot set last added schema: no schema has been added")
            schema_id = self.last_added_schema_id
        if all(s.schema_id != schema_id for s in self.md.schemas):
            raise ValidationError(f"Cannot add version with unknown schema: {schema_id}")
        dialects: set[str] = set()
        for rep in version.representations:
            if rep.type == SQL_REPRESENTATION:
                dialect = rep.dialect.lower()
                if dialect in dialects:
                    raise ValidationError(
                        f"Invalid view version: Cannot add multiple queries for dialect {dialect}"
                    )
                dialects.add(dialect)
        added = replace(version, version_id=new_id, schema_id=schema_id)
        self._set(versions=(*self.md.versions, added))
        self.added_versions.add(new_id)
        self.last_added_version_id = new_id
        return new_id

    def _set_current(self, version_id: int) -> None:
        if version_id == LAST_ADDED:
            if self.last_added_version_id is None:
                raise ValidationError("Cannot set last version id: no current version id has been set")
            version_id = self.last_added_version_id
        if version_id == self.md.current_version_id:
            return
        version = next((v for v in self.md.versions if v.version_id == version_id), None)
        if version is None:
            raise ValidationError(f"Cannot set current version to unknown version: {version_id}")
        self._set(current_version_id=version_id)
        stamp = version.timestamp_ms if version_id in self.added_versions else self.now
        self.history_entry = ViewHistoryEntry(version_id, stamp)


def _same_version(one: ViewVersion, two: ViewVersion) -> bool:
    """Java's ``sameViewVersion``: compared before a -1 schema id is resolved, as Java does."""
    return (
        dict(one.summary) == dict(two.summary)
        and one.representations == two.representations
        and one.default_catalog == two.default_catalog
        and one.default_namespace == two.default_namespace
        and one.schema_id == two.schema_id
    )


def apply_view_updates(
    base: ViewMetadata, updates: Iterable[ViewUpdate], timestamp_ms: int | None = None
) -> ViewMetadata | None:
    """``base`` with ``updates`` applied, or None when they change nothing (Java then commits
    nothing). ``timestamp_ms`` is the clock for a ``version-log`` entry (None: now)."""
    builder = _Builder(base, now_ms() if timestamp_ms is None else timestamp_ms)
    for update in updates:
        builder.apply(update)
    if not builder.changed:
        return None
    md = builder.md
    if builder.history_entry is not None:
        md = replace(md, version_log=(*md.version_log, builder.history_entry))
    md = finish_view_change(base, md, frozenset(builder.added_versions))
    check_view_metadata(md)
    return md

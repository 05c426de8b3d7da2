"""Iceberg view metadata, format version 1 (Iceberg view spec), and its pure changes.

A view is a stored query: each *version* holds the query as SQL text in one or more
dialects (its *representations*), the schema of the query's result, and the
``default-catalog``/``default-namespace`` that unqualified names inside the SQL resolve
against. The view spec: "Each version of the view contains a list of representations
[...] A view version can have more than one representation. All representations for a
version must express the same underlying definition." The ``version-log`` records which
version was current when, so a reader can travel back in time.

The changes below follow Iceberg Java's ``ViewMetadata.Builder`` (1.10), because Spark
writes the views iceduck reads and reads the ones iceduck writes:

* an added version equal to an existing one (same summary, representations, default
  catalog and namespace, schema) reuses that version's id; an added schema equal to an
  existing one (same fields and identifier fields) reuses that schema's id;
* a version may hold at most one SQL representation per dialect, compared in lower case
  ("Invalid view version: Cannot add multiple queries for dialect %s");
* replacing the current version must keep every dialect of the previous one unless
  ``replace.drop-dialect.allowed`` is true ("Cannot replace view due to loss of view
  dialects");
* at most ``version.history.num-entries`` (default 10) versions are kept, the newest by id
  and always the current one; the ``version-log`` is cleared past a version no longer kept.

Everything here is pure (no I/O); a timestamp left out is the wall clock's.
"""

from __future__ import annotations

import time
import uuid as uuid_module
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from iceduck.errors import NotFoundError, UnsupportedError, ValidationError
from iceduck.spec.schema import Schema

#: the only view format version the view spec defines
SUPPORTED_VIEW_FORMAT_VERSION = 1
#: the representation type of SQL text (the spec's only one)
SQL_REPRESENTATION = "sql"

# View properties (Java's ``ViewProperties``)
VERSION_HISTORY_SIZE = "version.history.num-entries"
VERSION_HISTORY_SIZE_DEFAULT = 10
METADATA_COMPRESSION = "write.metadata.compression-codec"
#: views are GZIP by default in Java (``ViewProperties.METADATA_COMPRESSION_DEFAULT``),
#: unlike tables (``none``)
METADATA_COMPRESSION_DEFAULT = "gzip"
WRITE_METADATA_LOCATION = "write.metadata.path"
COMMENT = "comment"
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"
REPLACE_DROP_DIALECT_ALLOWED_DEFAULT = False

#: Java's ``ViewMetadata.Builder.INITIAL_SCHEMA_ID`` and the id Spark gives a view's first version
INITIAL_SCHEMA_ID = 0
INITIAL_VERSION_ID = 1


@dataclass(frozen=True)
class ViewRepresentation:
    """A SQL representation: ``{"type": "sql", "sql": ..., "dialect": ...}``."""

    sql: str
    dialect: str
    type: str = SQL_REPRESENTATION


@dataclass(frozen=True)
class ViewVersion:
    """One version of a view (the spec's "Versions" fields)."""

    version_id: int
    timestamp_ms: int
    schema_id: int
    summary: Mapping[str, str]
    representations: tuple[ViewRepresentation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: str | None = None

    def representation(self, dialect: str) -> ViewRepresentation | None:
        """The SQL representation of ``dialect`` (compared case-insensitively, as Java's
        builder compares dialects), or None."""
        wanted = dialect.lower()
        for rep in self.representations:
            if rep.type == SQL_REPRESENTATION and rep.dialect.lower() == wanted:
                return rep
        return None

    @property
    def dialects(self) -> frozenset[str]:
        """The lower-case dialects of its SQL representations (Java's ``sqlDialectsFor``)."""
        return frozenset(r.dialect.lower() for r in self.representations if r.type == SQL_REPRESENTATION)


@dataclass(frozen=True)
class ViewHistoryEntry:
    """A ``version-log`` entry: ``version_id`` became current at ``timestamp_ms``."""

    version_id: int
    timestamp_ms: int


@dataclass(frozen=True)
class ViewMetadata:
    """A view metadata file's content."""

    format_version: int
    view_uuid: str
    location: str
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...]
    schemas: tuple[Schema, ...]
    properties: Mapping[str, str] = field(default_factory=dict)

    @property
    def current_version(self) -> ViewVersion:
        return self.version(self.current_version_id)

    @property
    def schema(self) -> Schema:
        """The current version's schema."""
        return self.schema_by_id(self.current_version.schema_id)

    def schema_by_id(self, schema_id: int) -> Schema:
        for schema in self.schemas:
            if schema.schema_id == schema_id:
                return schema
        raise NotFoundError(
            f"view {self.location}: no schema with id {schema_id} "
            f"(schemas: {sorted(s.schema_id for s in self.schemas)})"
        )

    def version(self, version_id: int) -> ViewVersion:
        for version in self.versions:
            if version.version_id == version_id:
                return version
        raise NotFoundError(
            f"view {self.location}: no version {version_id} "
            f"(versions: {sorted(v.version_id for v in self.versions)})"
        )

    def version_as_of(self, timestamp_ms: int) -> ViewVersion:
        """The version that was current at ``timestamp_ms``: the last ``version-log`` entry
        at or before it (the log is "a list of timestamp and version ID pairs that encodes
        changes to the view's current version")."""
        current: ViewHistoryEntry | None = None
        for entry in self.version_log:
            if entry.timestamp_ms <= timestamp_ms and (
                current is None or entry.timestamp_ms >= current.timestamp_ms
            ):
                current = entry
        if current is None:
            raise NotFoundError(
                f"view {self.location}: no version was current at timestamp {timestamp_ms} ms"
            )
        return self.version(current.version_id)


def check_view_metadata(md: ViewMetadata) -> None:
    """The rules a view metadata file must keep; :class:`ValidationError` (or
    :class:`UnsupportedError` for a format version) naming the broken one."""
    if md.format_version != SUPPORTED_VIEW_FORMAT_VERSION:
        raise UnsupportedError(
            f"view format version {md.format_version} is not supported (iceduck reads version 1)"
        )
    schema_ids = [s.schema_id for s in md.schemas]
    if len(set(schema_ids)) != len(schema_ids):
        raise ValidationError(f"view metadata has duplicate schema ids: {schema_ids}")
    version_ids = [v.version_id for v in md.versions]
    if len(set(version_ids)) != len(version_ids):
        raise ValidationError(f"view metadata has duplicate version ids: {version_ids}")
    if md.current_version_id not in version_ids:
        raise ValidationError(
            f"Cannot find current version {md.current_version_id} in view versions: {sorted(version_ids)}"
        )
    for version in md.versions:
        if version.schema_id not in schema_ids:
            raise ValidationError(
                f"view version {version.version_id} names unknown schema {version.schema_id}"
            )
        _check_dialects(version.representations)


def _check_dialects(representations: Iterable[ViewRepresentation]) -> None:
    seen: set[str] = set()
    for rep in representations:
        if rep.type != SQL_REPRESENTATION:
            continue
        dialect = rep.dialect.lower()
        if dialect in seen:
            raise ValidationError(f"Invalid view version: Cannot add multiple queries for dialect {dialect}")
        seen.add(dialect)


# -- building ------------------------------------------------------------------------------


def new_view(
    location: str,
    schema: Schema,
    representations: Iterable[ViewRepresentation],
    default_namespace: tuple[str, ...],
    default_catalog: str | None = None,
    summary: Mapping[str, str] | None = None,
    properties: Mapping[str, str] | None = None,
    view_uuid: str | None = None,
    timestamp_ms: int | None = None,
) -> ViewMetadata:
    """The metadata of a new view: schema 0, version 1 (as Spark's ``CREATE VIEW`` through
    Java's ``BaseMetastoreViewCatalog.ViewBuilder.create``), one ``version-log`` entry.
    ``timestamp_ms`` None means now."""
    timestamp_ms = now_ms() if timestamp_ms is None else timestamp_ms
    version = ViewVersion(
        version_id=INITIAL_VERSION_ID,
        timestamp_ms=timestamp_ms,
        schema_id=INITIAL_SCHEMA_ID,
        summary=dict(summary or {}),
        representations=tuple(representations),
        default_namespace=tuple(default_namespace),
        default_catalog=default_catalog,
    )
    _check_dialects(version.representations)
    md = ViewMetadata(
        format_version=SUPPORTED_VIEW_FORMAT_VERSION,
        view_uuid=view_uuid or str(uuid_module.uuid4()),
        location=location.rstrip("/") or location,
        current_version_id=version.version_id,
        versions=(version,),
        version_log=(ViewHistoryEntry(version.version_id, timestamp_ms),),
        schemas=(replace(schema, schema_id=INITIAL_SCHEMA_ID),),
        properties=dict(properties or {}),
    )
    _history_size(md.properties)  # refuse a bad setting at once
    check_view_metadata(md)
    return md


def add_view_version(
    base: ViewMetadata,
    schema: Schema,
    representations: Iterable[ViewRepresentation],
    default_namespace: tuple[str, ...],
    default_catalog: str | None = None,
    summary: Mapping[str, str] | None = None,
    timestamp_ms: int | None = None,
) -> ViewMetadata:
    """``base`` with a new current version (``CREATE OR REPLACE VIEW``, ``ALTER VIEW ... AS``):
    Java's ``ViewMetadata.Builder.setCurrentVersion`` then ``build``.

    The schema reuses the id of an equal schema, else takes the highest id + 1; the version
    reuses the id of an equal version, else takes the highest id + 1 (Java's
    ``reuseOrCreateNewViewVersionId``). Making a version current appends a ``version-log``
    entry (none when it already is current). ``timestamp_ms`` None means now."""
    timestamp_ms = now_ms() if timestamp_ms is None else timestamp_ms
    schema_id, schemas = _add_schema(base.schemas, schema)
    candidate = ViewVersion(
        version_id=max((v.version_id for v in base.versions), default=0) + 1,
        timestamp_ms=timestamp_ms,
        schema_id=schema_id,
        summary=dict(summary or {}),
        representations=tuple(representations),
        default_namespace=tuple(default_namespace),
        default_catalog=default_catalog,
    )
    _check_dialects(candidate.representations)
    existing = next((v for v in base.versions if _same_version(v, candidate)), None)
    versions = base.versions if existing is not None else (*base.versions, candidate)
    new_current = existing.version_id if existing is not None else candidate.version_id
    log = base.version_log
    if new_current != base.current_version_id:
        log = (*log, ViewHistoryEntry(new_current, timestamp_ms))
    added = frozenset() if existing is not None else frozenset({candidate.version_id})
    md = replace(base, schemas=schemas, versions=versions, current_version_id=new_current, version_log=log)
    return _finish(base, md, added)


def set_view_properties(
    base: ViewMetadata, updates: Mapping[str, str], removals: Iterable[str] = ()
) -> ViewMetadata:
    """``base`` with properties set and removed (``ALTER VIEW ... SET/UNSET TBLPROPERTIES``);
    a key in both is refused."""
    removals = set(removals)
    both = sorted(removals & set(updates))
    if both:
        raise ValidationError(f"cannot set and remove the same view properties at once: {', '.join(both)}")
    properties = {k: v for k, v in base.properties.items() if k not in removals}
    properties.update(updates)
    return _finish(base, replace(base, properties=properties), frozenset())


def now_ms() -> int:
    """The wall clock in milliseconds, the unit of ``timestamp-ms``."""
    return time.time_ns() // 1_000_000


def _add_schema(schemas: tuple[Schema, ...], schema: Schema) -> tuple[int, tuple[Schema, ...]]:
    """Java's ``addSchemaInternal``: the id of an equal schema, or a new one appended."""
    for existing in schemas:
        if _same_schema(existing, schema):
            return existing.schema_id, schemas
    new_id = max((s.schema_id + 1 for s in schemas), default=INITIAL_SCHEMA_ID)
    return new_id, (*schemas, replace(schema, schema_id=new_id))


def _same_schema(one: Schema, two: Schema) -> bool:
    """Java's ``Schema.sameSchema``: the same struct and identifier fields, whatever the id."""
    return one.fields == two.fields and set(one.identifier_field_ids) == set(two.identifier_field_ids)


def _same_version(one: ViewVersion, two: ViewVersion) -> bool:
    """Java's ``sameViewVersion``: would behave the same, ignoring id and timestamp."""
    return (
        dict(one.summary) == dict(two.summary)
        and one.representations == two.representations
        and one.default_catalog == two.default_catalog
        and one.default_namespace == two.default_namespace
        and one.schema_id == two.schema_id
    )


def _history_size(properties: Mapping[str, str]) -> int:
    text = properties.get(VERSION_HISTORY_SIZE)
    if text is None:
        return VERSION_HISTORY_SIZE_DEFAULT
    try:
        size = int(text.strip())
    except ValueError:
        raise ValidationError(
            f"view property {VERSION_HISTORY_SIZE!r} must be an integer, not {text!r}"
        ) from None
    if size <= 0:
        raise ValidationError(f"{VERSION_HISTORY_SIZE} must be positive but was {size}")
    return size


def _drop_dialect_allowed(properties: Mapping[str, str]) -> bool:
    """Java's ``PropertyUtil.propertyAsBoolean``: ``true`` in any case, anything else false."""
    text = properties.get(REPLACE_DROP_DIALECT_ALLOWED)
    return REPLACE_DROP_DIALECT_ALLOWED_DEFAULT if text is None else text.strip().lower() == "true"


def _finish(base: ViewMetadata, md: ViewMetadata, added: frozenset[int]) -> ViewMetadata:
    """Java's ``Builder.build`` for metadata built from ``base``: the dialect rule, then
    expiring old versions."""
    previous, current = base.current_version, md.current_version
    if not _drop_dialect_allowed(md.properties) and not previous.dialects <= current.dialects:
        raise ValidationError(
            f"Cannot replace view due to loss of view dialects ({REPLACE_DROP_DIALECT_ALLOWED}=false):\n"
            f"Previous dialects: {sorted(previous.dialects)}\nNew dialects: {sorted(current.dialects)}"
        )
    keep = max(len(added | {md.current_version_id}), _history_size(md.properties))
    if len(md.versions) <= keep:
        return md
    versions = _expire_versions(md.versions, keep, current)
    kept_ids = {v.version_id for v in versions}
    return replace(md, versions=versions, version_log=_retained_log(md.version_log, kept_ids))


def _expire_versions(
    versions: tuple[ViewVersion, ...], keep: int, current: ViewVersion
) -> tuple[ViewVersion, ...]:
    """Java's ``expireVersions``: the current version first, then the others newest id first,
    ``keep`` in all ("version ids are assigned sequentially. keep the latest versions by ID")."""
    newest_first = sorted(versions, key=lambda v: v.version_id, reverse=True)[:keep]
    retained = [current]
    for version in newest_first:
        if len(retained) == keep:
            break
        if version.version_id != current.version_id:
            retained.append(version)
    return tuple(retained)


def _retained_log(log: tuple[ViewHistoryEntry, ...], kept_ids: set[int]) -> tuple[ViewHistoryEntry, ...]:
    """Java's ``updateHistory``: "clear history past any unknown version"."""
    retained: list[ViewHistoryEntry] = []
    for entry in log:
        if entry.version_id in kept_ids:
            retained.append(entry)
        else:
            retained.clear()
    return tuple(retained)

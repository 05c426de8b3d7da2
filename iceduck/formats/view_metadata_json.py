"""View metadata JSON files (Iceberg view spec v1).

Writing mirrors Iceberg Java 1.10's ``ViewMetadataParser.toJson`` (and
``ViewVersionParser``, ``SQLViewRepresentationParser``, ``ViewHistoryEntryParser``) key
for key, in Java's key order, as compact UTF-8 JSON, so that for a view metadata file
Spark writes::

    view_metadata_json(parse_view_metadata(data, path)) == json.loads(gunzip(data))

* metadata: ``view-uuid``, ``format-version``, ``location``, ``properties`` (only when
  not empty), ``schemas``, ``current-version-id``, ``versions``, ``version-log``;
* version: ``version-id``, ``timestamp-ms``, ``schema-id``, ``summary``,
  ``default-catalog`` (only when set), ``default-namespace``, ``representations``;
* SQL representation: ``type``, ``sql``, ``dialect``; a representation of another type
  keeps only its ``type`` (Java's ``UnknownViewRepresentation``);
* version-log entry: ``timestamp-ms``, ``version-id``.

A file is GZIP when its first bytes are GZIP's magic, whatever its name (Java picks the
codec from the name: ``.gz.metadata.json`` is GZIP, the view default). Anything
malformed is a :class:`CorruptDataError` naming the file and the field.
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

from iceduck.errors import CorruptDataError, UnsupportedError, ValidationError
from iceduck.formats.metadata_json import GZIP_MAGIC
from iceduck.formats.schema_json import (
    corrupt_in,
    get_int,
    get_list,
    get_long,
    get_str,
    get_str_list,
    get_str_map,
    require_object,
    schema_from_json,
    schema_to_json,
)
from iceduck.spec.view_metadata import (
    SQL_REPRESENTATION,
    SUPPORTED_VIEW_FORMAT_VERSION,
    ViewHistoryEntry,
    ViewMetadata,
    ViewRepresentation,
    ViewVersion,
    check_view_metadata,
)

_WHERE = "view metadata"


# -- reading ---------------------------------------------------------------------------


def parse_view_metadata(data: str | bytes | dict[str, Any], source: str) -> ViewMetadata:
    """Parse view metadata: a file's bytes (plain or GZIP), its text, or decoded JSON (a
    REST response). ``source`` names where it came from in every error."""
    if isinstance(data, bytes):
        data = _decode(data, source)
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise CorruptDataError(f"view metadata is not valid JSON: {e}", source) from e
    try:
        with corrupt_in(source):
            md = _parse(require_object(data, _WHERE))
        check_view_metadata(md)
    except UnsupportedError as e:  # "format version 2": the file, not the reader, is new
        raise UnsupportedError(f"{source}: {e}") from e
    except ValidationError as e:
        raise CorruptDataError(str(e), source) from e
    return md


def _decode(data: bytes, source: str) -> str:
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise CorruptDataError(f"invalid GZIP data: {e}", source) from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CorruptDataError(f"view metadata is not valid UTF-8: {e}", source) from e


def _parse(obj: dict[str, Any]) -> ViewMetadata:
    version = get_int(obj, "format-version", _WHERE)
    if version != SUPPORTED_VIEW_FORMAT_VERSION:
        raise UnsupportedError(f"view format version {version} is not supported (iceduck reads version 1)")
    return ViewMetadata(
        format_version=version,
        view_uuid=get_str(obj, "view-uuid", _WHERE),
        location=get_str(obj, "location", _WHERE),
        current_version_id=get_int(obj, "current-version-id", _WHERE),
        versions=tuple(
            _version(require_object(v, f"versions[{i}]"), f"versions[{i}]")
            for i, v in enumerate(get_list(obj, "versions", _WHERE))
        ),
        version_log=tuple(
            _history_entry(require_object(e, f"version-log[{i}]"), f"version-log[{i}]")
            for i, e in enumerate(get_list(obj, "version-log", _WHERE))
        ),
        schemas=tuple(
            schema_from_json(s, f"schemas[{i}]") for i, s in enumerate(get_list(obj, "schemas", _WHERE))
        ),
        properties=get_str_map(obj, "properties", _WHERE) or {},
    )


def _version(obj: dict[str, Any], where: str) -> ViewVersion:
    summary = get_str_map(obj, "summary", where, required=True)
    assert summary is not None  # required
    return ViewVersion(
        version_id=get_int(obj, "version-id", where),
        timestamp_ms=get_long(obj, "timestamp-ms", where),
        schema_id=get_int(obj, "schema-id", where),
        summary=summary,
        representations=tuple(
            _representation(
                require_object(r, f"{where}: representations[{i}]"), f"{where}: representations[{i}]"
            )
            for i, r in enumerate(get_list(obj, "representations", where))
        ),
        default_namespace=get_str_list(obj, "default-namespace", where),
        default_catalog=get_str(obj, "default-catalog", where, required=False),
    )


def _representation(obj: dict[str, Any], where: str) -> ViewRepresentation:
    kind = get_str(obj, "type", where)
    if kind.lower() != SQL_REPRESENTATION:
        return ViewRepresentation(sql="", dialect="", type=kind)
    return ViewRepresentation(
        sql=get_str(obj, "sql", where), dialect=get_str(obj, "dialect", where), type=SQL_REPRESENTATION
    )


def _history_entry(obj: dict[str, Any], where: str) -> ViewHistoryEntry:
    return ViewHistoryEntry(
        version_id=get_int(obj, "version-id", where), timestamp_ms=get_long(obj, "timestamp-ms", where)
    )


# -- writing ---------------------------------------------------------------------------


def view_metadata_json(md: ViewMetadata) -> dict[str, Any]:
    """The JSON object Java writes for ``md``, keys in Java's order (module docstring)."""
    out: dict[str, Any] = {
        "view-uuid": md.view_uuid,
        "format-version": md.format_version,
        "location": md.location,
    }
    if md.properties:
        out["properties"] = dict(md.properties)
    out["schemas"] = [schema_to_json(s) for s in md.schemas]
    out["current-version-id"] = md.current_version_id
    out["versions"] = [view_version_json(v) for v in md.versions]
    out["version-log"] = [
        {"timestamp-ms": e.timestamp_ms, "version-id": e.version_id} for e in md.version_log
    ]
    return out


def view_version_json(version: ViewVersion) -> dict[str, Any]:
    """A version as Java's ``ViewVersionParser.toJson`` writes it (REST requests use it too)."""
    out: dict[str, Any] = {
        "version-id": version.version_id,
        "timestamp-ms": version.timestamp_ms,
        "schema-id": version.schema_id,
        "summary": dict(version.summary),
    }
    if version.default_catalog is not None:
        out["default-catalog"] = version.default_catalog
    out["default-namespace"] = list(version.default_namespace)
    out["representations"] = [_representation_json(r) for r in version.representations]
    return out


def view_version_from_json(obj: Any, source: str) -> ViewVersion:
    """A single version (a REST ``add-view-version`` update), errors naming ``source``."""
    with corrupt_in(source):
        return _version(require_object(obj, "view version"), "view version")


def _representation_json(rep: ViewRepresentation) -> dict[str, Any]:
    if rep.type != SQL_REPRESENTATION:
        return {"type": rep.type}
    return {"type": rep.type, "sql": rep.sql, "dialect": rep.dialect}


def dumps(md: ViewMetadata) -> str:
    """Compact JSON text, as Java's Jackson generator writes it."""
    return json.dumps(view_metadata_json(md), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def write_view_metadata(md: ViewMetadata, compress: bool) -> bytes:
    """A metadata file's bytes; GZIP (zero modification time) when ``compress``."""
    data = dumps(md).encode("utf-8")
    return gzip.compress(data, mtime=0) if compress else data

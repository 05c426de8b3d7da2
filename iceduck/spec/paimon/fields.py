"""Typed fields of Paimon's metadata records: the JSON of snapshot, schema and tag files and
the decoded Avro records of manifests. Each reader names the field and the file when a value
is missing or of the wrong kind, so a corrupt file is reported, never half-read."""

from __future__ import annotations

from typing import Any

from iceduck.errors import CorruptDataError


def opt_int(record: dict[str, Any], key: str, path: str) -> int | None:
    """An optional integer field (a JSON bool is no integer)."""
    value = record.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise CorruptDataError(f"{key} is not an integer: {value!r}", path)
    return value


def req_int(record: dict[str, Any], key: str, path: str) -> int:
    value = opt_int(record, key, path)
    if value is None:
        raise CorruptDataError(f"{key} is missing", path)
    return value


def opt_str(record: dict[str, Any], key: str, path: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise CorruptDataError(f"{key} is not a string: {value!r}", path)
    return value


def req_str(record: dict[str, Any], key: str, path: str) -> str:
    """A string field that must be present and not empty (a file name, a commit user)."""
    value = opt_str(record, key, path)
    if not value:
        raise CorruptDataError(f"{key} is missing or empty", path)
    return value


def opt_bytes(record: dict[str, Any], key: str, path: str) -> bytes | None:
    value = record.get(key)
    if value is not None and not isinstance(value, bytes):
        raise CorruptDataError(f"{key} is not bytes", path)
    return value


def req_bytes(record: dict[str, Any], key: str, path: str) -> bytes:
    value = opt_bytes(record, key, path)
    if value is None:
        raise CorruptDataError(f"{key} is missing", path)
    return value


def opt_strs(record: dict[str, Any], key: str, path: str) -> tuple[str, ...] | None:
    """An optional array of strings (``_EXTRA_FILES``, ``_VALUE_STATS_COLS``, key lists)."""
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorruptDataError(f"{key} is not an array of strings: {value!r}", path)
    return tuple(value)

"""View metadata JSON as Java's ``ViewMetadataParser`` reads and writes it."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from iceduck.errors import CorruptDataError, UnsupportedError
from iceduck.formats.view_metadata_json import (
    dumps,
    parse_view_metadata,
    view_metadata_json,
    write_view_metadata,
)

SOURCE = "s3://b/wh/ns/v/metadata/00001-x.gz.metadata.json"


def java_view() -> dict[str, Any]:
    """A view metadata object in the shape and key order Java 1.10 writes (``toJson``)."""
    return {
        "view-uuid": "fa6506c3-7681-40c8-86dc-e36561f83385",
        "format-version": 1,
        "location": "s3://b/wh/ns/v",
        "properties": {"create_version": "1", "spark.query-column-names": "id,data"},
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [
                    {"id": 0, "name": "id", "required": False, "type": "long"},
                    {"id": 1, "name": "data", "required": False, "type": "string", "doc": "d"},
                ],
            }
        ],
        "current-version-id": 2,
        "versions": [
            {
                "version-id": 1,
                "timestamp-ms": 1573518431292,
                "schema-id": 0,
                "summary": {"engine-name": "Spark", "engine-version": "3.5.5"},
                "default-catalog": "prod",
                "default-namespace": ["default"],
                "representations": [
                    {
                        "type": "sql",
                        "sql": "SELECT\n    COUNT(1), CAST(event_ts AS DATE)\nFROM events",
                        "dialect": "spark",
                    }
                ],
            },
            {
                "version-id": 2,
                "timestamp-ms": 1573518981593,
                "schema-id": 0,
                "summary": {"engine-name": "Spark"},
                "default-namespace": [],
                "representations": [
                    {"type": "sql", "sql": "SELECT 1", "dialect": "spark"},
                    {"type": "sql", "sql": "SELECT 1", "dialect": "duckdb"},
                    {"type": "future-kind"},
                ],
            },
        ],
        "version-log": [
            {"timestamp-ms": 1573518431292, "version-id": 1},
            {"timestamp-ms": 1573518981593, "version-id": 2},
        ],
    }


def test_round_trip_is_java_key_for_key() -> None:
    obj = java_view()
    md = parse_view_metadata(obj, SOURCE)
    assert md.current_version.representation("duckdb") is not None
    assert md.versions[0].default_catalog == "prod" and md.versions[1].default_catalog is None
    out = view_metadata_json(md)
    assert out == obj
    assert json.dumps(out) == json.dumps(obj)  # the same key order, at every level


def test_empty_properties_are_not_written() -> None:
    obj = java_view()
    del obj["properties"]
    md = parse_view_metadata(obj, SOURCE)
    assert md.properties == {}
    assert "properties" not in view_metadata_json(md)


def test_gzip_and_plain_bytes_both_parse() -> None:
    md = parse_view_metadata(java_view(), SOURCE)
    assert parse_view_metadata(write_view_metadata(md, compress=True), SOURCE) == md
    assert parse_view_metadata(write_view_metadata(md, compress=False), SOURCE) == md
    assert write_view_metadata(md, compress=False) == dumps(md).encode()
    assert gzip.decompress(write_view_metadata(md, compress=True)) == dumps(md).encode()


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda o: o.pop("view-uuid"), "missing required field 'view-uuid'"),
        (lambda o: o["versions"][0].pop("summary"), "versions[0]: missing required field 'summary'"),
        (lambda o: o["versions"][1]["representations"][0].pop("sql"), "missing required field 'sql'"),
        (lambda o: o.update({"current-version-id": 9}), "Cannot find current version 9"),
        (lambda o: o["version-log"][0].update({"version-id": "1"}), "must be an int"),
        (lambda o: o.update({"schemas": {}}), "must be a JSON list"),
    ],
)
def test_a_broken_file_is_an_error_naming_it(change: Any, problem: str) -> None:
    obj = java_view()
    change(obj)
    with pytest.raises(CorruptDataError) as raised:
        parse_view_metadata(json.dumps(obj).encode(), SOURCE)
    assert raised.value.path == SOURCE
    assert problem in str(raised.value)


def test_not_json_or_bad_gzip_names_the_file() -> None:
    with pytest.raises(
        CorruptDataError, match=r"00001-x\.gz\.metadata\.json: view metadata is not valid JSON"
    ):
        parse_view_metadata(b"{", SOURCE)
    with pytest.raises(CorruptDataError, match="invalid GZIP data"):
        parse_view_metadata(b"\x1f\x8bxx", SOURCE)


def test_an_unknown_format_version_is_unsupported() -> None:
    obj = java_view()
    obj["format-version"] = 2
    with pytest.raises(UnsupportedError, match=f"{SOURCE}: view format version 2"):
        parse_view_metadata(obj, SOURCE)

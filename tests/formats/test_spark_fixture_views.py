"""View metadata Spark 3.5 + Iceberg 1.10.2 wrote (tests/fixtures/views, see its README):
iceduck reads every file and writes it back as the same bytes, and its builder replays
Spark's CREATE OR REPLACE VIEW / ALTER VIEW to the same metadata."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from iceduck.catalog.metadata_files import next_view_metadata_location, read_view_metadata
from iceduck.formats.metadata_json import metadata_file_version
from iceduck.formats.view_metadata_json import dumps, parse_view_metadata, view_metadata_json
from iceduck.spec.view_metadata import ViewMetadata, add_view_version, set_view_properties

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "views"
FILES = sorted(FIXTURES.glob("ns/*/metadata/*.metadata.json"))


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8")


def test_the_fixtures_are_there() -> None:
    assert len(FILES) == 9
    assert all(p.name.endswith(".gz.metadata.json") for p in FILES)  # Java's views: gzip by default


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parts[-3]}/{p.name[:5]}")
def test_spark_view_metadata_round_trips_byte_for_byte(path: Path) -> None:
    text = _text(path)
    md = read_view_metadata(str(path))
    assert view_metadata_json(md) == json.loads(text)  # field for field
    assert dumps(md) == text  # and in Java's key order and compact form, byte for byte
    assert parse_view_metadata(dumps(md).encode(), str(path)) == md


def _load(view: str, number: int) -> ViewMetadata:
    (path,) = FIXTURES.glob(f"ns/{view}/metadata/{number:05d}-*.gz.metadata.json")
    return read_view_metadata(str(path))


def test_the_builder_replays_sparks_replace_and_property_changes() -> None:
    """``CREATE OR REPLACE VIEW`` (a new schema and version), ``ALTER VIEW SET TBLPROPERTIES``
    and ``UNSET``: the metadata iceduck's builder makes from the previous file equals the next
    file Spark wrote."""
    first, second, third, fourth = (_load("replaced", n) for n in range(4))
    new = second.current_version
    replayed = add_view_version(
        first,
        second.schema,
        new.representations,
        new.default_namespace,
        new.default_catalog,
        new.summary,
        new.timestamp_ms,
    )
    replayed = set_view_properties(replayed, {"spark.query-column-names": "customer,n,total"})
    assert replayed == second
    assert set_view_properties(second, {"a": "1", "b": "2"}) == third
    assert set_view_properties(third, {}, ["b"]) == fourth


def test_next_file_names_follow_sparks() -> None:
    """``%05d-<uuid>.gz.metadata.json`` numbered one past the current file, in ``location/metadata``."""
    paths = sorted(FIXTURES.glob("ns/replaced/metadata/*.gz.metadata.json"))
    md = read_view_metadata(str(paths[-1]))
    following = next_view_metadata_location(md, str(paths[-1]))
    assert following.startswith(f"{md.location}/metadata/00004-")
    assert following.endswith(".gz.metadata.json")
    assert [metadata_file_version(p.name) for p in paths] == [0, 1, 2, 3]

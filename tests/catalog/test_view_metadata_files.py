"""View metadata files named and written as Java's ``BaseViewOperations`` does."""

from __future__ import annotations

import gzip
import re
from dataclasses import replace
from pathlib import Path

import pytest

from iceduck.catalog.metadata_files import read_view_metadata, write_view_metadata_file
from iceduck.errors import CorruptDataError, ValidationError
from iceduck.spec.schema import Schema
from iceduck.spec.types import LongType, NestedField
from iceduck.spec.view_metadata import ViewMetadata, ViewRepresentation, new_view

_NAME = r"(\d{5})-[0-9a-f-]{36}"


def _view(location: Path, **properties: str) -> ViewMetadata:
    schema = Schema((NestedField(1, "id", LongType()),))
    rep = ViewRepresentation("SELECT 1 AS id", "spark")
    return new_view(location.as_uri(), schema, [rep], ("ns",), properties=properties, timestamp_ms=1)


def test_views_are_gzip_by_default_and_numbered_on(tmp_path: Path) -> None:
    """``ViewProperties.METADATA_COMPRESSION_DEFAULT = "gzip"``; ``%05d-<uuid><ext>`` with
    the number one past the base file's."""
    md = _view(tmp_path / "v")
    first = write_view_metadata_file(md, None)
    assert re.fullmatch(re.escape(f"{md.location}/metadata/") + _NAME + r"\.gz\.metadata\.json", first)
    assert first.endswith(".gz.metadata.json") and "/00000-" in first
    local = Path(first.removeprefix("file://"))
    assert gzip.decompress(local.read_bytes()).startswith(b'{"view-uuid":')
    assert read_view_metadata(first) == md
    second = write_view_metadata_file(md, first)
    assert "/00001-" in second and second != first


def test_codec_none_and_metadata_path(tmp_path: Path) -> None:
    md = _view(tmp_path / "v", **{"write.metadata.compression-codec": "NONE"})
    plain = write_view_metadata_file(md, "file:///x/00041-a.gz.metadata.json")
    assert plain.startswith(f"{md.location}/metadata/00042-")
    assert plain.endswith(".metadata.json") and not plain.endswith(".gz.metadata.json")
    elsewhere = (tmp_path / "meta").as_uri()
    md = replace(md, properties={**md.properties, "write.metadata.path": elsewhere + "/"})
    assert write_view_metadata_file(md, None).startswith(elsewhere + "/00000-")
    with pytest.raises(ValidationError, match="'none' or 'gzip', not 'zstd'"):
        write_view_metadata_file(replace(md, properties={"write.metadata.compression-codec": "zstd"}), None)


def test_a_broken_view_file_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "00000-u.metadata.json"
    broken.write_text('{"format-version": 1}')
    with pytest.raises(CorruptDataError, match=re.escape(str(broken))):
        read_view_metadata(str(broken))

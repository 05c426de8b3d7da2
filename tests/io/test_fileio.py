from pathlib import Path

import pytest

from iceduck.errors import AlreadyExistsError, CorruptDataError, UnsupportedError
from iceduck.io import fileio


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/a/b/c.avro", "/a/b/c.avro"),
        ("file:/a/b/c.avro", "/a/b/c.avro"),
        ("file:///a/b/c.avro", "/a/b/c.avro"),
        ("file://localhost/a/b", "/a/b"),
        ("file:/a/b%20c", "/a/b c"),
    ],
)
def test_local_paths(location: str, expected: str) -> None:
    assert fileio.to_local_path(location) == expected


@pytest.mark.parametrize("location", ["s3://bucket/key", "hdfs://nn/x", "file://host/a"])
def test_remote_locations_are_unsupported(location: str) -> None:
    with pytest.raises(UnsupportedError, match=r"not supported|only local"):
        fileio.to_local_path(location)


def test_write_new_never_overwrites(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "v1.metadata.json"
    fileio.write_new(f"file:{target}", b"first")
    assert fileio.read_bytes(str(target)) == b"first"
    with pytest.raises(AlreadyExistsError, match="refusing to overwrite"):
        fileio.write_new(str(target), b"second")
    assert target.read_bytes() == b"first"
    assert [p.name for p in target.parent.iterdir()] == ["v1.metadata.json"]


def test_missing_file_error_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.avro"
    with pytest.raises(CorruptDataError, match=r"gone\.avro: file does not exist"):
        fileio.read_bytes(str(missing))
    fileio.delete(str(missing))  # deleting twice is fine

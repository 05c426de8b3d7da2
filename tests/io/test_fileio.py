import errno
import os
from pathlib import Path

import pytest

from iceduck.errors import AlreadyExistsError, CorruptDataError, StorageError, UnsupportedError, UserError
from iceduck.io import fileio


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/a/b/c.avro", "/a/b/c.avro"),
        ("file:/a/b/c.avro", "/a/b/c.avro"),
        ("file:///a/b/c.avro", "/a/b/c.avro"),
        ("file://localhost/a/b", "/a/b"),
        ("file:/a/b%20c", "/a/b%20c"),  # literal, as Hadoop's Path, DuckDB and PyIceberg read it
        ("file:/d/s=a%2Fb/f.parquet", "/d/s=a%2Fb/f.parquet"),  # Java's partition folder names
        ("file://localhost/a#b?c", "/a#b?c"),
    ],
)
def test_local_paths(location: str, expected: str) -> None:
    assert fileio.to_local_path(location) == expected


@pytest.mark.parametrize("location", ["s3://bucket/key", "hdfs://nn/x", "file://host/a"])
def test_remote_locations_are_unsupported(location: str) -> None:
    with pytest.raises(UnsupportedError, match=r"not supported|only local|has no local path"):
        fileio.to_local_path(location)


def test_other_schemes_than_object_stores_are_refused_by_name() -> None:
    with pytest.raises(UnsupportedError, match=r"only local files and s3://, gs://, abfss:// locations"):
        fileio.read_bytes("hdfs://nn/x")


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


# -- the storage refusing ----------------------------------------------------------------------------


def test_a_name_over_255_bytes_is_a_storage_error_naming_it(tmp_path: Path) -> None:
    """A real ENAMETOOLONG from the kernel, through write_new's one translation."""
    target = tmp_path / ("n" * 300) / "v1.metadata.json"
    with pytest.raises(StorageError, match=r"has 300 bytes \(255 bytes per name\)") as caught:
        fileio.write_new(str(target), b"{}")
    assert caught.value.path == str(target)
    assert str(target) in str(caught.value)


def test_a_name_of_250_bytes_is_written(tmp_path: Path) -> None:
    """The temporary name must not be what overflows: a 250-byte final name fits."""
    target = tmp_path / ("m" * 250)
    fileio.write_new(str(target), b"x")
    assert target.read_bytes() == b"x"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.ENOSPC, "no space left on device: free space and run the statement again"),
        (errno.EDQUOT, "disk quota exceeded"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
        (errno.EPERM, "operation not permitted"),
        (errno.EFBIG, "file too large (limit"),
        (errno.EIO, "input/output error"),
        (errno.ENOTDIR, "the file system refused: Not a directory (errno 20)"),
    ],
)
def test_each_errno_says_what_happened_and_what_to_do(code: int, says: str) -> None:
    error = fileio.storage_error(OSError(code, os.strerror(code), "/w/db/t/data/f.parquet"))
    assert isinstance(error, StorageError)
    assert error.path == "/w/db/t/data/f.parquet"
    assert str(error) == f"/w/db/t/data/f.parquet: {error.problem}"
    assert says in error.problem


def test_an_errno_is_found_in_a_message_without_one() -> None:
    """DuckDB and pyarrow quote the C library's text but set no errno."""
    assert fileio.errno_in_message('Could not write file "/a/b": No space left on device') == errno.ENOSPC
    assert fileio.errno_in_message("IOError: Read-only file system") == errno.EROFS
    assert fileio.errno_in_message("cannot convert 'abc' to INT32") is None


def test_a_nul_in_a_location_is_a_user_error() -> None:
    with pytest.raises(UserError, match="NUL character"):
        fileio.to_local_path("/w/db/a\x00b/metadata")
    with pytest.raises(UserError, match="NUL character"):
        fileio.read_bytes("file:/w/a\x00b")

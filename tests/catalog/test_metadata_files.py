import os
from pathlib import Path

import pytest

from iceduck.catalog.metadata_files import (
    MetadataCache,
    current_hadoop_metadata_file,
    has_metadata_files,
    newest_metadata_file,
    read_version_hint,
)
from iceduck.errors import NotFoundError, UserError
from iceduck.io.fileio import MissingFileError
from tests.catalog.helpers import write_metadata


def _hint(table: Path, text: str) -> None:
    (table / "metadata" / "version-hint.text").write_text(text)


def test_hadoop_follows_the_hint(tmp_path: Path) -> None:
    for v in (1, 2, 3):
        write_metadata(tmp_path, f"v{v}.metadata.json", v)
    _hint(tmp_path, "2\n")
    # hint says 2, but v3 exists: Java moves forward while v<N+1> exists
    assert current_hadoop_metadata_file(tmp_path / "metadata") == tmp_path / "metadata" / "v3.metadata.json"


def test_hadoop_hint_stops_at_the_first_gap(tmp_path: Path) -> None:
    for v in (1, 2, 5):
        write_metadata(tmp_path, f"v{v}.metadata.json", v)
    _hint(tmp_path, "1")
    assert current_hadoop_metadata_file(tmp_path / "metadata").name == "v2.metadata.json"


@pytest.mark.parametrize("hint", [None, "", "garbage", "9"])
def test_hadoop_without_a_usable_hint_lists_the_folder(tmp_path: Path, hint: str | None) -> None:
    for v in (1, 2, 10):
        write_metadata(tmp_path, f"v{v}.metadata.json", v)
    if hint is not None:
        _hint(tmp_path, hint)
    assert current_hadoop_metadata_file(tmp_path / "metadata").name == "v10.metadata.json"


def test_hadoop_gzip_names(tmp_path: Path) -> None:
    write_metadata(tmp_path, "v1.metadata.json", 1)
    write_metadata(tmp_path, "v2.gz.metadata.json", 2)
    write_metadata(tmp_path, "v3.metadata.json.gz", 3)
    _hint(tmp_path, "1")
    assert current_hadoop_metadata_file(tmp_path / "metadata").name == "v3.metadata.json.gz"


def test_hadoop_without_files(tmp_path: Path) -> None:
    assert current_hadoop_metadata_file(tmp_path / "metadata") is None
    write_metadata(tmp_path, "00001-abc.metadata.json", 1)  # metastore naming only
    assert current_hadoop_metadata_file(tmp_path / "metadata") is None
    assert has_metadata_files(tmp_path)
    assert read_version_hint(tmp_path / "metadata") is None


def test_newest_across_naming_schemes(tmp_path: Path) -> None:
    write_metadata(tmp_path, "00001-a.metadata.json", 1)
    write_metadata(tmp_path, "00012-b.gz.metadata.json", 12)
    write_metadata(tmp_path, "00003-c.metadata.json", 3)
    write_metadata(tmp_path, "notes.metadata.json", 99)  # no version number: ignored
    (tmp_path / "metadata" / "snap-1.avro").write_bytes(b"")
    assert newest_metadata_file(tmp_path / "metadata").name == "00012-b.gz.metadata.json"


def test_newest_prefers_a_valid_hint(tmp_path: Path) -> None:
    write_metadata(tmp_path, "v1.metadata.json", 1)
    write_metadata(tmp_path, "00007-x.metadata.json", 7)
    _hint(tmp_path, "1")
    assert newest_metadata_file(tmp_path / "metadata").name == "v1.metadata.json"
    _hint(tmp_path, "4")  # names no file: fall back to the highest number
    assert newest_metadata_file(tmp_path / "metadata").name == "00007-x.metadata.json"


def test_newest_refuses_ambiguity_and_emptiness(tmp_path: Path) -> None:
    write_metadata(tmp_path, "00002-a.metadata.json", 2)
    write_metadata(tmp_path, "00002-b.metadata.json", 2)
    with pytest.raises(UserError, match=r"ambiguous.*version 2.*00002-a.*00002-b"):
        newest_metadata_file(tmp_path / "metadata")
    empty = tmp_path / "empty" / "metadata"
    empty.mkdir(parents=True)
    with pytest.raises(NotFoundError, match=r"no metadata file.*empty/metadata"):
        newest_metadata_file(empty)


def test_cache_parses_once_and_notices_rewrites(tmp_path: Path) -> None:
    path = write_metadata(tmp_path, "v1.metadata.json", 1)
    cache = MetadataCache()
    first = cache.load(str(path))
    assert cache.load(str(path)) is first
    write_metadata(tmp_path, "v1.metadata.json", 22)  # rewritten in place (size changes)
    os.utime(path, ns=(1, 1))
    assert cache.load(str(path)).last_updated_ms == 22
    path.unlink()
    with pytest.raises(MissingFileError, match=r"v1\.metadata\.json: file does not exist"):
        cache.load(str(path))


def test_cache_is_bounded(tmp_path: Path) -> None:
    cache = MetadataCache(capacity=2)
    paths = [write_metadata(tmp_path, f"v{v}.metadata.json", v) for v in (1, 2, 3)]
    loaded = [cache.load(str(p)) for p in paths]
    assert cache.load(str(paths[2])) is loaded[2]
    assert cache.load(str(paths[0])) is not loaded[0]  # evicted, parsed again
